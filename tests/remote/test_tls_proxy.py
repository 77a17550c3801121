"""Corporate networks: a private CA via CaBundle, the OS store otherwise, CONNECT proxies."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme

from desktop.base.config import NoPolicy
from desktop.base.errors import ConfigError, DownloadError, RemoteError
from desktop.catalog._hub import RemoteFile
from desktop.engine._types import ChatCall, GenerationParams, Message
from desktop.root.context import AppContext, build_context
from tests.remote.fake_openai import BLOB, Fake, connect_proxy, fake_server


@pytest.fixture(scope="module")
def ca_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(CA bundle, server certificate chain, server key) of a CA nobody else trusts."""
    folder = tmp_path_factory.mktemp("ca")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    bundle, chain, key = folder / "corp-root.pem", folder / "chain.pem", folder / "key.pem"
    ca.cert_pem.write_to_path(str(bundle))
    cert.private_key_pem.write_to_path(str(key))
    chain.write_bytes(b"".join(blob.bytes() for blob in cert.cert_chain_pems))
    return bundle, chain, key


@pytest.fixture(scope="module")
def tls_fake(ca_files: tuple[Path, Path, Path]) -> Iterator[Fake]:
    with fake_server(tls=(ca_files[1], ca_files[2])) as fake:
        yield fake


def _context(fake: Fake, **settings: Any) -> AppContext:
    ctx = build_context(policy=NoPolicy(), cli_settings=settings)
    ctx.remote_registry.add("corp", fake.url)
    return ctx


def _ask(ctx: AppContext) -> str:
    try:
        stream = ctx.scheduler.stream_chat(
            "corp/echo", ChatCall.of([Message("user", "over tls")], GenerationParams(max_tokens=8))
        )
        return "".join(c.text for c in stream)
    finally:
        ctx.close()


def test_private_ca_is_refused_with_the_reason(tls_fake: Fake) -> None:
    with pytest.raises(RemoteError, match="not trusted by this machine") as caught:
        _ask(_context(tls_fake))
    assert "ca_bundle" in str(caught.value)


def test_ca_bundle_makes_it_trusted(tls_fake: Fake, ca_files: tuple[Path, Path, Path]) -> None:
    assert _ask(_context(tls_fake, ca_bundle=str(ca_files[0]))) == "over tls "


def test_unreadable_ca_bundle_is_named(tls_fake: Fake, tmp_path: Path) -> None:
    (tmp_path / "bad.pem").write_text("not a certificate")
    with pytest.raises(ConfigError, match="cannot be used"):
        _ask(_context(tls_fake, ca_bundle=str(tmp_path / "bad.pem")))


def test_proxy_setting_tunnels_through_connect(
    tls_fake: Fake, ca_files: tuple[Path, Path, Path]
) -> None:
    with connect_proxy() as proxy:
        ctx = _context(tls_fake, ca_bundle=str(ca_files[0]), proxy=proxy.url)
        assert _ask(ctx) == "over tls "
    port = tls_fake.url.split(":")[2].split("/")[0]
    assert proxy.tunnels == [f"127.0.0.1:{port}"]


def test_https_proxy_and_no_proxy_from_the_environment(
    tls_fake: Fake, ca_files: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    with connect_proxy() as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", "")
        assert _ask(_context(tls_fake, ca_bundle=str(ca_files[0]))) == "over tls "
        assert len(proxy.tunnels) == 1
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert _ask(_context(tls_fake, ca_bundle=str(ca_files[0]))) == "over tls "
        assert len(proxy.tunnels) == 1  # bypassed


def test_refusing_proxy_is_named(tls_fake: Fake, ca_files: tuple[Path, Path, Path]) -> None:
    with connect_proxy(refuse=True) as proxy:
        ctx = _context(tls_fake, ca_bundle=str(ca_files[0]), proxy=proxy.url)
        with pytest.raises(RemoteError, match="proxy refused the connection"):
            _ask(ctx)


def test_downloads_use_the_same_trust_and_proxy(
    tls_fake: Fake, edgedesk_home: Path, ca_files: tuple[Path, Path, Path]
) -> None:
    """The Hub, mirrors and remotes share one transport: a mirror behind the corporate CA."""
    base = tls_fake.url.removesuffix("/v1")
    blob = RemoteFile(
        "corp/mirror",
        "blob.gguf",
        "0" * 40,
        len(BLOB),
        hashlib.sha256(BLOB).hexdigest(),
        f"{base}/files/blob",
    )
    refused = build_context(policy=NoPolicy())
    with pytest.raises(DownloadError, match="not trusted by this machine"):
        refused.downloader(max_attempts=1).fetch(blob, edgedesk_home / "a.gguf")
    refused.close()
    with connect_proxy() as proxy:
        ctx = build_context(
            policy=NoPolicy(), cli_settings={"ca_bundle": str(ca_files[0]), "proxy": proxy.url}
        )
        fetched = ctx.downloader(max_attempts=1).fetch(blob, edgedesk_home / "b.gguf")
        ctx.close()
    assert fetched.path.read_bytes() == BLOB and len(proxy.tunnels) == 1
