"""Operations: Prometheus metrics exposition and structured (JSON) logs."""
