"""The sandbox's certificate authority: certificates a strict client accepts, and refuses
where it should, made with the standard library alone."""

import datetime
import hashlib
import os
import ssl
import stat

import pytest

import tests.certs
from benchmarks_wiki.sandbox import Portal, certificates
from benchmarks_wiki.sandbox.certificates import Authority


@pytest.fixture(scope="module")
def authority():
    # The suite's own: the CA, a server leaf, a wrong-host leaf and one another CA signed.
    return tests.certs.authority()


def strict_client(cafile):
    context = ssl.create_default_context(cafile=cafile)
    # Python 3.13 sets this by default; setting it everywhere holds older versions to it too.
    context.verify_flags |= ssl.VERIFY_X509_STRICT
    return context


def handshake(pair, client, host):
    """A TLS handshake between a server with ``pair`` and ``client`` over memory buffers;
    returns the certificate the client verified."""
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(*pair)
    to_server, to_client = ssl.MemoryBIO(), ssl.MemoryBIO()
    client_end = client.wrap_bio(to_client, to_server, server_hostname=host)
    server_end = server.wrap_bio(to_server, to_client, server_side=True)
    done = {client_end: False, server_end: False}
    for _ in range(10):
        for end in (client_end, server_end):
            if not done[end]:
                try:
                    end.do_handshake()
                    done[end] = True
                except ssl.SSLWantReadError:
                    pass
        if all(done.values()):
            return client_end.getpeercert()
    raise AssertionError("the handshake did not finish")


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_strict_client_accepts_the_server_certificate(authority, host):
    seen = handshake(authority["server"], strict_client(authority.ca_file), host)
    assert seen["subjectAltName"] == (("IP Address", "127.0.0.1"), ("DNS", "localhost"))
    assert dict(pair for rdn in seen["issuer"] for pair in rdn)["commonName"] == "benchmarks-wiki sandbox CA"


@pytest.fixture(scope="module")
def fresh():
    """An authority made here and now, with leaves for a host it is made for and for one
    it is not."""
    made = Authority(hosts=["sandbox.example"])
    made.issue("server", ["127.0.0.1", "localhost", "sandbox.example"])
    made.issue("evil", ["evil.example"])
    yield made
    made.remove()


def test_the_ca_and_its_leaves_last_two_days_from_an_hour_ago(fresh):
    leaf = handshake(fresh["server"], strict_client(fresh.ca_file), "127.0.0.1")
    (ca,) = strict_client(fresh.ca_file).get_ca_certs()
    now = datetime.datetime.now(datetime.timezone.utc).timestamp()
    for seen in (ca, leaf):
        starts, ends = ssl.cert_time_to_seconds(seen["notBefore"]), ssl.cert_time_to_seconds(seen["notAfter"])
        assert now - 3600 - 60 < starts < now - 3600 + 60
        assert ends - starts == 2 * 86400 + 3600


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "sandbox.example"])
def test_the_ca_vouches_for_the_hosts_it_was_made_for(fresh, host):
    assert handshake(fresh["server"], strict_client(fresh.ca_file), host)


def test_the_ca_cannot_vouch_for_another_host(fresh):
    # The leaf names evil.example and is signed by the CA's own key: only the CA's name
    # constraints stand in the way.
    with pytest.raises(ssl.SSLCertVerificationError, match="permitted subtree violation"):
        handshake(fresh["evil"], strict_client(fresh.ca_file), "evil.example")


@pytest.mark.parametrize("name, host, reason", [
    ("wrong-host", "127.0.0.1", "IP address mismatch"),
    ("wrong-host", "localhost", "Hostname mismatch"),
    ("untrusted", "127.0.0.1", "unable to get local issuer certificate"),
])
def test_a_client_refuses_the_wrong_host_and_an_untrusted_issuer(authority, name, host, reason):
    with pytest.raises(ssl.SSLCertVerificationError) as caught:
        handshake(authority[name], strict_client(authority.ca_file), host)
    assert reason in str(caught.value)


def test_a_client_that_trusts_another_ca_refuses_the_server(authority):
    other = Authority()
    with pytest.raises(ssl.SSLCertVerificationError):
        handshake(authority["server"], strict_client(other.ca_file), "127.0.0.1")
    other.remove()


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def umask_022():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_files_are_private_and_removed_with_their_own_folder(umask_022, monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    made = Authority()
    certfile, keyfile = made.issue("server", ["::1", "Sandbox.Example"])
    assert os.path.dirname(made.folder) == str(tmp_path / "cache" / "benchmarks-wiki")
    assert os.path.basename(made.folder).startswith("sandbox-")
    assert mode(made.folder) == mode(os.path.dirname(made.folder)) == 0o700
    assert {mode(path) for path in (made.ca_file, certfile, keyfile)} == {0o600}
    with open(made.ca_file, encoding="ascii") as ca:
        assert ca.read().startswith("-----BEGIN CERTIFICATE-----\n")
    with open(keyfile, encoding="ascii") as key:
        assert key.read().startswith("-----BEGIN EC PRIVATE KEY-----\n")
    made.remove()
    made.remove()
    assert not os.path.exists(made.folder)


@pytest.mark.parametrize("bits, used", [(0o700, True), (0o755, False), (0o1777, False)])
def test_the_runtime_folder_is_used_only_when_no_one_else_may_enter_it(monkeypatch, tmp_path, bits, used):
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    runtime.chmod(bits)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = certificates.private_folder()
    assert os.path.dirname(folder) == str((runtime if used else tmp_path / "cache") / "benchmarks-wiki")
    assert mode(folder) == mode(os.path.dirname(folder)) == 0o700


def test_a_cache_folder_others_may_enter_is_made_private(monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "benchmarks-wiki").mkdir(mode=0o777)
    (tmp_path / "benchmarks-wiki").chmod(0o777)
    certificates.private_folder()
    assert mode(tmp_path / "benchmarks-wiki") == 0o700


def test_a_link_in_place_of_the_cache_folder_is_refused(monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    (tmp_path / "benchmarks-wiki").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PermissionError):
        certificates.private_folder()


def test_a_portal_keeps_its_own_ca_private_and_removes_it_when_it_stops(umask_022, monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    portal = Portal().start()
    folder = os.path.dirname(portal.ca_file)
    try:
        assert os.path.dirname(folder) == str(tmp_path / "benchmarks-wiki")
        assert mode(folder) == 0o700 and {mode(os.path.join(folder, name)) for name in os.listdir(folder)} == {0o600}
    finally:
        portal.stop()
    assert not os.path.exists(folder) and portal.ca_file is None


@pytest.mark.parametrize("name", ["../escape", "", "ca"])
def test_a_certificate_is_named_by_a_plain_file_name_other_than_the_cas(fresh, name):
    with pytest.raises(ValueError):
        fresh.issue(name)


def test_the_curve_is_p256():
    x, y = certificates.G
    assert (y * y - x ** 3 + 3 * x - certificates.B) % certificates.P == 0
    assert certificates.multiply(certificates.N, certificates.G) is None


def test_a_key_signs_as_ecdsa_with_sha256():
    key = certificates.EcKey()
    signature = key.sign(b"message")
    assert signature[0] == 0x30 and signature[2] == 0x02
    size = signature[3]
    r = int.from_bytes(signature[4:4 + size], "big")
    s = int.from_bytes(signature[6 + size:], "big")
    digest = int.from_bytes(hashlib.sha256(b"message").digest(), "big")
    inverse = pow(s, -1, certificates.N)
    public = certificates.multiply(key.secret, certificates.G)
    found = certificates.add(certificates.multiply(digest * inverse % certificates.N, certificates.G),
                             certificates.multiply(r * inverse % certificates.N, public))
    assert found[0] % certificates.N == r


def test_der_encoding():
    assert certificates._oid("1.2.840.113549.1.1.11") == bytes.fromhex("06092a864886f70d01010b")
    assert certificates._integer(128) == b"\x02\x02\x00\x80" and certificates._integer(0) == b"\x02\x01\x00"
    assert certificates._tlv(0x04, bytes(300))[:4] == b"\x04\x82\x01\x2c"
    late = datetime.datetime(2050, 1, 2, 3, 4, 5)
    assert certificates._time(late) == b"\x18\x0f20500102030405Z"
    assert certificates._time(late.replace(year=2049)) == b"\x17\x0d490102030405Z"
