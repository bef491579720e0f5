"""Settings: every documented FAITHSCREEN_* variable, by its exact name, read back."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import SecretStr, ValidationError

from app.settings import DEFAULT_DATABASE_URL, Settings
from app.vocabulary import Role
from faithscreen_client.credentials import mask_credentials_in_text, mask_url_credentials

pytestmark = pytest.mark.usefixtures("clean_env")


def read(settings: Settings, path: str) -> Any:
    value: Any = settings
    for part in path.split("."):
        value = getattr(value, part)
    return value.get_secret_value() if isinstance(value, SecretStr) else value


ROLE_VARIABLES = [
    ("BASE_URL", "base_url", "http://127.0.0.1:8100/v1", "http://127.0.0.1:8100/v1"),
    ("MODEL", "model", "qwen2.5-72b", "qwen2.5-72b"),
    ("API_KEY", "api_key", "sk-secret", "sk-secret"),
    ("MAX_TOKENS", "max_tokens", "4096", 4096),
    ("TEMPERATURE", "temperature", "0.7", 0.7),
    ("TIMEOUT_SECONDS", "timeout_seconds", "600", 600.0),
    ("MAX_RESPONSE_BYTES", "max_response_bytes", "65536", 65536),
    ("MAX_RETRY_AFTER_SECONDS", "max_retry_after_seconds", "60", 60.0),
    ("EVIDENTIAL", "evidential", "false", False),
]
VARIABLES = [
    ("FAITHSCREEN_DATABASE_URL", "database_url", "postgresql://u@h/db", "postgresql://u@h/db"),
    ("FAITHSCREEN_CONFIRMATIONS", "confirmations", "2", 2),
    ("FAITHSCREEN_FORMAT_RETRIES", "format_retries", "4", 4),
    ("FAITHSCREEN_LLM_CONCURRENCY", "llm_concurrency", "3", 3),
    ("FAITHSCREEN_MAX_STATEMENT_BYTES", "max_statement_bytes", "1000", 1000),
    *(
        (f"FAITHSCREEN_{role.upper()}_{suffix}", f"{role}.{attribute}", raw, value)
        for role in ("translator", "judge")
        for suffix, attribute, raw, value in ROLE_VARIABLES
    ),
]


@pytest.mark.parametrize(("variable", "path", "raw", "expected"), VARIABLES)
def test_each_variable_is_read_by_its_exact_name(
    monkeypatch: pytest.MonkeyPatch, variable: str, path: str, raw: str, expected: object
) -> None:
    default = read(Settings(), path)
    monkeypatch.setenv(variable, raw)
    assert read(Settings(), path) == expected != default


def test_the_defaults() -> None:
    settings = Settings()
    assert settings.database_url == DEFAULT_DATABASE_URL == "sqlite:///faithscreen.db"
    assert (settings.confirmations, settings.format_retries) == (0, 2)
    assert settings.max_statement_bytes == 64 * 1024
    assert settings.translator.base_url is None and settings.judge.model is None
    assert settings.missing_providers() == [
        "FAITHSCREEN_TRANSLATOR_BASE_URL",
        "FAITHSCREEN_TRANSLATOR_MODEL",
        "FAITHSCREEN_JUDGE_BASE_URL",
        "FAITHSCREEN_JUDGE_MODEL",
    ]


def test_one_role_variable_leaves_the_other_role_and_the_other_fields_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAITHSCREEN_JUDGE_MODEL", "judge")
    settings = Settings()
    assert (settings.judge.model, settings.judge.max_tokens) == ("judge", 2048)
    assert settings.translator.model is None
    assert settings.provider(Role.JUDGE) is settings.judge
    assert settings.missing_providers() == [
        "FAITHSCREEN_TRANSLATOR_BASE_URL",
        "FAITHSCREEN_TRANSLATOR_MODEL",
        "FAITHSCREEN_JUDGE_BASE_URL",
    ]


@pytest.mark.parametrize(
    ("variable", "raw"),
    [
        ("FAITHSCREEN_CONFIRMATIONS", "-1"),
        ("FAITHSCREEN_CONFIRMATIONS", "many"),
        ("FAITHSCREEN_LLM_CONCURRENCY", "0"),
        ("FAITHSCREEN_MAX_STATEMENT_BYTES", "0"),
        ("FAITHSCREEN_TRANSLATOR_TEMPERATURE", "3"),
        ("FAITHSCREEN_JUDGE_TIMEOUT_SECONDS", "0"),
        # Not silently taken as either: a typo must not decide whether a model is evidential.
        ("FAITHSCREEN_TRANSLATOR_EVIDENTIAL", "flase"),
        ("FAITHSCREEN_JUDGE_EVIDENTIAL", ""),
    ],
)
def test_an_invalid_value_is_refused(
    monkeypatch: pytest.MonkeyPatch, variable: str, raw: str
) -> None:
    monkeypatch.setenv(variable, raw)
    with pytest.raises(ValidationError):
        Settings()


def test_masked_hides_every_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAITHSCREEN_TRANSLATOR_API_KEY", "sk-translator-secret")
    monkeypatch.setenv("FAITHSCREEN_JUDGE_API_KEY", "sk-judge-secret")
    monkeypatch.setenv("FAITHSCREEN_DATABASE_URL", "postgresql://app:pg-secret@db:5432/fs")
    masked = Settings().masked()
    text = repr(masked)
    for secret in ("sk-translator-secret", "sk-judge-secret", "pg-secret"):
        assert secret not in text
    assert masked["database_url"] == "postgresql://app:***@db:5432/fs"
    assert masked["translator"]["api_key"] == masked["judge"]["api_key"] == "**********"
    assert "sk-translator-secret" not in repr(Settings())


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("postgresql://app:s3cret@db/fs", "postgresql://app:***@db/fs"),
        ("postgresql://app:p@ss:w@rd@db/fs", "postgresql://app:***@db/fs"),
        ("postgresql://app@db/fs", "postgresql://app@db/fs"),
        ("postgresql://app@db/fs?password=s3cret", "postgresql://app@db/fs?password=***"),
        (
            "postgresql://app:a@db/fs?sslmode=require&password=s3cret",
            "postgresql://app:***@db/fs?sslmode=require&password=***",
        ),
        ("sqlite:///faithscreen.db", "sqlite:///faithscreen.db"),
    ],
)
def test_a_database_url_password_is_masked(url: str, masked: str) -> None:
    assert mask_url_credentials(url) == masked


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("https://user:pw@gateway.example/v1", "https://user:***@gateway.example/v1"),
        # A user info with no password is a token there (https://KEY@host), not a name.
        ("https://sk-live-abc123@gateway.example/v1", "https://***@gateway.example/v1"),
        ("postgresql+psycopg://app@db/fs", "postgresql+psycopg://app@db/fs"),
        ("https://api.example/v1", "https://api.example/v1"),
    ],
)
def test_user_info_is_masked(url: str, masked: str) -> None:
    assert mask_url_credentials(url) == masked


CREDENTIAL_NAMES = ["api-key", "key", "token", "password", "sslpassword"]


@pytest.mark.parametrize("name", [*CREDENTIAL_NAMES, *(n.upper() for n in CREDENTIAL_NAMES)])
@pytest.mark.parametrize("position", ["first", "middle", "last"])
def test_each_credential_parameter_is_masked_in_any_case(name: str, position: str) -> None:
    parameters = {
        "first": f"?{name}=s3cret&sslmode=require",
        "middle": f"?sslmode=require&{name}=s3cret&x=1",
        "last": f"?sslmode=require&{name}=s3cret",
    }[position]
    masked = mask_url_credentials(f"https://gw.example/v1{parameters}")
    assert "s3cret" not in masked
    assert f"{name}=***" in masked and "sslmode=require" in masked


@pytest.mark.parametrize(
    "url",
    [
        "https://gw.example/v1?Api-Key=s3cret",
        "https://gw.example/v1?api%2Dkey=s3cret",  # a percent-encoded name is the same name
        "https://gw.example/v1?access_token=s3cret#top",
        "postgresql://app:pw@db/fs?sslpassword=s3cret&password=s3cret",
    ],
)
def test_credential_parameters_are_masked_however_written(url: str) -> None:
    assert "s3cret" not in mask_url_credentials(url)


def test_other_parameters_are_kept() -> None:
    url = "https://gw.example/v1?keyword=k&monkey=m&tokens=t&sslmode=require"
    assert mask_url_credentials(url) == url


def test_urls_in_free_text_are_masked_and_the_rest_kept() -> None:
    text = (
        "could not connect to 'postgresql://app:pg-s3cret@db:5432/fs?sslpassword=ssl-s3cret', "
        'then "GET /v1/x?token=tok-s3cret HTTP/1.1" 200 via https://k-s3cret@gw.example/v1'
    )
    masked = mask_credentials_in_text(text)
    assert "s3cret" not in masked
    # A value runs to the next space, & or #: a quote after it goes too (the safe side).
    assert "'postgresql://app:***@db:5432/fs?sslpassword=*** then" in masked
    assert '"GET /v1/x?token=*** HTTP/1.1" 200' in masked
    assert masked.endswith("via https://***@gw.example/v1")
    assert mask_credentials_in_text("nothing to hide here") == "nothing to hide here"


def test_every_model_is_evidential_unless_marked_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings()
    assert (settings.translator.evidential, settings.judge.evidential) == (True, True)
    monkeypatch.setenv("FAITHSCREEN_JUDGE_EVIDENTIAL", "false")
    settings = Settings()
    assert (settings.translator.evidential, settings.judge.evidential) == (True, False)
