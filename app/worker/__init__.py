"""The worker: claims queued screening jobs, runs the pipeline on them, holds their leases."""
