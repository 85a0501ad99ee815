"""Who may talk to a PolicyServer: empty tokens refused, a token and TLS beyond loopback, token
guessing slowed per peer, and TLS with a certificate made in the test (openssl), over real
sockets on 127.0.0.1."""

from __future__ import annotations

import logging
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from hub.cli.app import cli
from hub.errors import HubError
from hub.external import ExternalEnv, PolicyClient, PolicyServer, ProtocolError
from hub.external.auth import AuthGate
from hub.external.protocol import recv_message

from .conftest import Learner
from .test_serve_cmd import Served, _zeros
from .test_server_faults import _address, _episode, _hello, _raw
from .test_serving_limits import _closed_with, _wait


def _env():
    from hub.specs import Categorical, Unbounded

    return ExternalEnv(Unbounded((2,)), Categorical(3), max_concurrent=4, wait_s=0.05)


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 and localhost, and its key (PEM files)."""
    assert shutil.which("openssl"), "openssl makes the test's certificate"
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return str(cert), str(key)


def test_empty_tokens_and_unprotected_exposure_are_refused():
    env = _env()
    try:
        with pytest.raises(HubError, match="empty token"):
            PolicyServer(env, token="")
        with pytest.raises(HubError, match="empty token"):
            PolicyServer(env, token="   ")
        with pytest.raises(HubError, match="token"):
            PolicyServer(env, host="0.0.0.0")  # refused before binding anything
        with pytest.raises(HubError, match="clear text"):
            PolicyServer(env, host="0.0.0.0", token="s3cret-enough")
        with pytest.raises(HubError, match="port"):
            PolicyServer(env, port=99999)
    finally:
        env.close()


def test_hub_serve_refuses_empty_tokens_and_bad_ports_with_a_message():
    runner = CliRunner()
    result = runner.invoke(cli, ["serve", "hub:Pendulum", "--token", ""])
    assert result.exit_code == 1 and "empty token" in result.output
    result = runner.invoke(cli, ["serve", "hub:Pendulum", "--host", "0.0.0.0", "--token", "x"])
    assert result.exit_code == 1 and "--tls-cert" in result.output
    result = runner.invoke(cli, ["serve", "hub:Pendulum", "--port", "99999"])
    assert result.exit_code == 2 and "99999" in result.output
    assert "Traceback" not in result.output and result.exception.__class__ is SystemExit


def test_a_client_sending_an_empty_token_is_refused(no_leaks, caplog):
    env = _env()
    server = PolicyServer(env, token="s3cret")
    caplog.set_level(logging.WARNING, "hub.external.server")
    try:
        for token in ("", None, "wrong"):
            with pytest.raises(ProtocolError, match="token") as info:
                PolicyClient(_address(server), token=token, timeout=10)
            assert info.value.code == "unauthorized"
        refusals = [r.message for r in caplog.records if "unauthorized" in r.message]
        assert len(refusals) == 3 and all("127.0.0.1" in line for line in refusals)
    finally:
        server.close()
        env.close()


def test_token_guessing_is_slowed_per_peer(no_leaks):
    env = _env()
    # after 2 failures the peer's next check waits 60 s: beyond the 2 s handshake
    server = PolicyServer(
        env, token="s3cret", handshake_timeout=2.0, auth_gate=AuthGate(free_failures=2, delay=60)
    )
    learner = Learner(env)
    try:
        for _ in range(2):
            with pytest.raises(ProtocolError, match="wrong or missing token"):
                PolicyClient(_address(server), token="guess", timeout=10)
        for token in ("guess", "s3cret"):  # refused unchecked: even the right one waits
            with pytest.raises(ProtocolError, match="too many failed attempts") as info:
                PolicyClient(_address(server), token=token, timeout=10)
            assert info.value.code == "unauthorized"
        server.auth_gate.succeeded("127.0.0.1")  # the pause is over
        with PolicyClient(_address(server), token="s3cret", timeout=10) as client:
            _episode(client)
    finally:
        learner.stop()
        server.close()
        env.close()


def test_tls_serves_a_client_that_verifies_the_server(no_leaks, certificate, caplog):
    cert, key = certificate
    env = _env()
    server = PolicyServer(env, token="s3cret", tls_cert=cert, tls_key=key, handshake_timeout=2.0)
    learner = Learner(env)
    caplog.set_level(logging.WARNING, "hub.external.server")
    try:
        with PolicyClient(_address(server), token="s3cret", tls=cert, timeout=10) as client:
            _episode(client, first=3.0)
        with pytest.raises(ProtocolError, match="TLS handshake") as info:  # not the system's CA
            PolicyClient(_address(server), token="s3cret", tls=True, timeout=10, reconnect_s=0)
        assert info.value.code == "connection"
        with pytest.raises(ProtocolError, match="TLS handshake"):  # another name than its own
            PolicyClient(
                _address(server), tls=cert, tls_server_name="elsewhere", timeout=10, reconnect_s=0
            )
        sock = _raw(server, _hello("s3cret"))  # a client that speaks plain TCP
        with pytest.raises((ConnectionError, ProtocolError, OSError)):
            recv_message(sock, 1 << 20)
        sock.close()
        _wait(lambda: any("TLS handshake failed" in r.message for r in caplog.records))
    finally:
        learner.stop()
        server.close()
        env.close()


def test_a_tls_client_gets_a_clear_error_from_a_plain_server(no_leaks, certificate):
    env = _env()
    server = PolicyServer(env)
    try:
        with pytest.raises(ProtocolError, match="TLS handshake"):
            PolicyClient(_address(server), tls=certificate[0], timeout=5, reconnect_s=0)
    finally:
        server.close()
        env.close()


def test_hub_serve_with_tls(certificate):
    cert, key = certificate
    served = Served(
        "hub:Pendulum", "--tls-cert", cert, "--tls-key", key, "--token", "s3cret",
        "--episodes", "1", "--json",
    )  # fmt: skip
    try:
        with PolicyClient(served.address, token="s3cret", tls=cert, timeout=30) as client:
            eid = client.start_episode()
            obs = _zeros(client)
            client.get_action(eid, obs)
            client.log_returns(eid, -2.0)
            client.end_episode(eid, obs)
        assert served.finish() == {"episodes": 1, "mean_return": -2.0}
    finally:
        served.kill()


def test_a_wrong_hello_closes_before_the_token_is_read(no_leaks):
    env = _env()
    server = PolicyServer(env, token="s3cret")
    try:
        from hub.external.protocol import encode_message

        sock = _raw(server, encode_message("bye"))
        assert "hello" in _closed_with(sock, "bad_message")["message"]
    finally:
        server.close()
        env.close()
