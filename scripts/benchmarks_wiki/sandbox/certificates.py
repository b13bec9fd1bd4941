"""A throwaway certificate authority in standard-library Python, for the portal's HTTPS.

An unmodified client must verify the portal's HTTPS on machines that may have no
``openssl`` and no third-party package, so this module makes P-256 keys (at once, unlike
RSA ones) and DER-encodes X.509 v3 certificates signed with ECDSA and SHA-256, which pass
OpenSSL's strict checks (``VERIFY_X509_STRICT``, the default from Python 3.13). A client
told to trust this CA is exposed by it to nothing but the sandbox: its critical
nameConstraints permit only 127.0.0.1, localhost and the hosts it is made for; it lasts
:data:`VALID_DAYS` days (from an hour ago, for clocks a little behind) and its key never
leaves memory; its files are in a folder of the user's own (0700, each file 0600), so that
no other user can put a CA of their own where a shell still names this one, even after it
is removed; it is never added to any trust store.
"""

import base64
import datetime as _dt
import hashlib
import ipaddress
import os
import secrets
import shutil
import stat
import tempfile
import textwrap
import weakref

VALID_DAYS = 2
BACKDATED = _dt.timedelta(hours=1)
# The names every sandbox CA may vouch for, besides the hosts it is made for.
LOCAL_HOSTS = ("127.0.0.1", "localhost")

# The curve P-256 (FIPS 186-4, D.1.2.3): y^2 = x^3 - 3x + b over the integers modulo P,
# whose point G generates a group of prime order N.
P = 2 ** 256 - 2 ** 224 + 2 ** 192 + 2 ** 96 - 1
B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
G = (0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
     0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5)

# DER tags.
_BOOLEAN, _INTEGER, _BIT_STRING, _OCTET_STRING, _OID = 0x01, 0x02, 0x03, 0x04, 0x06
_UTF8, _UTC_TIME, _GENERALIZED_TIME, _SEQUENCE, _SET = 0x0C, 0x17, 0x18, 0x30, 0x31

_EC_PUBLIC_KEY, _PRIME256V1 = "1.2.840.10045.2.1", "1.2.840.10045.3.1.7"
_ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2"
_COMMON_NAME = "2.5.4.3"
_SUBJECT_KEY_ID, _KEY_USAGE, _SUBJECT_ALT_NAME = "2.5.29.14", "2.5.29.15", "2.5.29.17"
_BASIC_CONSTRAINTS, _NAME_CONSTRAINTS = "2.5.29.19", "2.5.29.30"
_EXT_KEY_USAGE, _AUTHORITY_KEY_ID = "2.5.29.37", "2.5.29.35"
_SERVER_AUTH = "1.3.6.1.5.5.7.3.1"

# keyUsage as DER named bit strings (unused-bit count first): bits 5 and 6 for a CA,
# bit 0 for a TLS server signing with its key.
_CA_KEY_USAGE = b"\x01\x06"
_SERVER_KEY_USAGE = b"\x07\x80"


def _tlv(tag, content):
    size = len(content)
    if size < 0x80:
        return bytes((tag, size)) + content
    length = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes((tag, 0x80 | len(length))) + length + content


def _sequence(*parts):
    return _tlv(_SEQUENCE, b"".join(parts))


def _integer(value):
    # One spare bit keeps a set top bit from reading as a negative number.
    return _tlv(_INTEGER, value.to_bytes(value.bit_length() // 8 + 1, "big"))


def _oid(dotted):
    first, second, *rest = (int(arc) for arc in dotted.split("."))
    encoded = b""
    for arc in [40 * first + second, *rest]:
        chunk = bytes([arc & 0x7F])
        while arc > 0x7F:
            arc >>= 7
            chunk = bytes([0x80 | (arc & 0x7F)]) + chunk
        encoded += chunk
    return _tlv(_OID, encoded)


def _bits(data):
    return _tlv(_BIT_STRING, b"\x00" + data)


def _context(number, content, constructed=True):
    return _tlv((0xA0 if constructed else 0x80) | number, content)


def _time(moment):
    # RFC 5280 section 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050 on.
    if moment.year < 2050:
        return _tlv(_UTC_TIME, moment.strftime("%y%m%d%H%M%SZ").encode("ascii"))
    return _tlv(_GENERALIZED_TIME, moment.strftime("%Y%m%d%H%M%SZ").encode("ascii"))


def _name(common_name):
    return _sequence(_tlv(_SET, _sequence(_oid(_COMMON_NAME), _tlv(_UTF8, common_name.encode("utf-8")))))


def _general_name(host, mask=False):
    # With mask, an address is the one-host range a name constraint takes.
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return _context(2, host.lower().encode("ascii"), constructed=False)
    return _context(7, address.packed + (b"\xff" * len(address.packed) if mask else b""), constructed=False)


def _pem(label, der):
    lines = textwrap.fill(base64.b64encode(der).decode("ascii"), 64)
    return "-----BEGIN %s-----\n%s\n-----END %s-----\n" % (label, lines, label)


def add(p, q):
    """The sum of two points of the curve; None is the point at infinity."""
    if p is None or q is None:
        return q if p is None else p
    if p[0] == q[0] and (p[1] + q[1]) % P == 0:
        return None
    if p == q:
        slope = 3 * (p[0] * p[0] - 1) * pow(2 * p[1], -1, P)
    else:
        slope = (q[1] - p[1]) * pow(q[0] - p[0], -1, P)
    x = (slope * slope - p[0] - q[0]) % P
    return x, (slope * (p[0] - x) - p[1]) % P


def multiply(k, point):
    result = None
    while k:
        if k & 1:
            result = add(result, point)
        point, k = add(point, point), k >> 1
    return result


class EcKey:
    def __init__(self):
        self.secret = secrets.randbelow(N - 1) + 1
        x, y = multiply(self.secret, G)
        self.point = b"\x04" + x.to_bytes(32, "big") + y.to_bytes(32, "big")

    def identifier(self):
        # RFC 7093 method 1: SHA-256 of the key's bits, cut to 160 bits, so SHA-1 is never needed.
        return hashlib.sha256(self.point).digest()[:20]

    def sign(self, data):
        # FIPS 186-4, 6.4.
        digest = int.from_bytes(hashlib.sha256(data).digest(), "big")
        while True:
            nonce = secrets.randbelow(N - 1) + 1
            r = multiply(nonce, G)[0] % N
            s = pow(nonce, -1, N) * (digest + r * self.secret) % N
            if r and s:
                return _sequence(_integer(r), _integer(s))


def _extension(dotted, value, critical=False):
    flag = _tlv(_BOOLEAN, b"\xff") if critical else b""
    return _sequence(_oid(dotted), flag, _tlv(_OCTET_STRING, value))


def certificate(subject, key, issuer, issuer_key, extensions):
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
    validity = _sequence(_time(now - BACKDATED), _time(now + _dt.timedelta(days=VALID_DAYS)))
    # Positive, non-zero and at most 20 octets, as RFC 5280 section 4.1.2.2 asks.
    serial = secrets.randbits(127) | 1
    signed = _sequence(_oid(_ECDSA_WITH_SHA256))
    public_key = _sequence(_sequence(_oid(_EC_PUBLIC_KEY), _oid(_PRIME256V1)), _bits(key.point))
    tbs = _sequence(_context(0, _integer(2)), _integer(serial), signed, issuer, validity, subject, public_key,
                    _context(3, _sequence(*extensions)))
    return _sequence(tbs, signed, _bits(issuer_key.sign(tbs)))


def _private(path):
    """Whether ``path`` is a folder (not a link to one) of this user's that nobody else may enter."""
    found = os.lstat(path)
    # Without getuid (Windows) the folders of a user's profile are theirs.
    mine = not hasattr(os, "getuid") or (found.st_uid == os.getuid() and not found.st_mode & 0o077)
    return stat.S_ISDIR(found.st_mode) and mine


def private_folder():
    """A new folder of this user's, 0700, named unguessably, in a ``benchmarks-wiki`` folder (0700 too) of
    ``$XDG_RUNTIME_DIR`` when that is private to this user, else of ``$XDG_CACHE_HOME`` or ``~/.cache``."""
    base = os.environ.get("XDG_RUNTIME_DIR", "")
    if not (os.path.isabs(base) and os.path.isdir(base) and _private(base)):
        base = os.environ.get("XDG_CACHE_HOME", "")
        base = base if os.path.isabs(base) else os.path.join(os.path.expanduser("~"), ".cache")
    parent = os.path.join(base, "benchmarks-wiki")
    os.makedirs(parent, mode=0o700, exist_ok=True)
    if not os.path.islink(parent):
        os.chmod(parent, 0o700)
    if not _private(parent):
        raise PermissionError("%s is not a folder of this user's that only it may enter" % parent)
    folder = tempfile.mkdtemp(prefix="sandbox-", dir=parent)
    # mkdtemp asks for 0700, but a umask could have taken bits away.
    os.chmod(folder, 0o700)
    return folder


class Authority(dict):
    """A throwaway CA for ``hosts`` besides :data:`LOCAL_HOSTS`, mapping each server certificate's name
    to its ``(certfile, keyfile)``: files in a new :func:`private_folder`, removed with it."""

    def __init__(self, hosts=()):
        self.folder = private_folder()
        # remove() deletes the folder and everything in it, and may be called twice. It must run
        # even when nobody calls it: weakref.finalize also runs it at exit.
        self.remove = weakref.finalize(self, shutil.rmtree, self.folder, ignore_errors=True)
        self._key = EcKey()
        self._subject = _name("benchmarks-wiki sandbox CA")
        # permittedSubtrees [0], each GeneralSubtree only its base: no minimum, no maximum.
        permitted = _context(0, b"".join(_sequence(_general_name(host, mask=True))
                                         for host in dict.fromkeys(LOCAL_HOSTS + tuple(hosts))))
        ca = certificate(self._subject, self._key, self._subject, self._key, [
            _extension(_BASIC_CONSTRAINTS, _sequence(_tlv(_BOOLEAN, b"\xff")), critical=True),
            _extension(_KEY_USAGE, _tlv(_BIT_STRING, _CA_KEY_USAGE), critical=True),
            _extension(_NAME_CONSTRAINTS, _sequence(permitted), critical=True),
            _extension(_SUBJECT_KEY_ID, _tlv(_OCTET_STRING, self._key.identifier())),
        ])
        self.ca_file = self._write("ca.pem", _pem("CERTIFICATE", ca))

    def issue(self, name, hosts=LOCAL_HOSTS):
        """Make a server certificate for ``hosts`` (IP addresses or DNS names) with a key of
        its own, signed by this CA; returns and records its ``(certfile, keyfile)``."""
        if os.sep in name or name in ("", ".", "..", "ca"):
            raise ValueError("a certificate name is a plain file name other than ca: %r" % name)
        key = EcKey()
        # DER leaves out a default value, so CA:FALSE is an empty basicConstraints.
        der = certificate(_name(name), key, self._subject, self._key, [
            _extension(_BASIC_CONSTRAINTS, _sequence(), critical=True),
            _extension(_KEY_USAGE, _tlv(_BIT_STRING, _SERVER_KEY_USAGE), critical=True),
            _extension(_EXT_KEY_USAGE, _sequence(_oid(_SERVER_AUTH))),
            _extension(_SUBJECT_ALT_NAME, _sequence(*(_general_name(host) for host in hosts))),
            _extension(_SUBJECT_KEY_ID, _tlv(_OCTET_STRING, key.identifier())),
            _extension(_AUTHORITY_KEY_ID, _sequence(_context(0, self._key.identifier(), constructed=False))),
        ])
        # SEC 1 (RFC 5915): version 1, the secret, the curve and the public point.
        private = _sequence(_integer(1), _tlv(_OCTET_STRING, key.secret.to_bytes(32, "big")),
                            _context(0, _oid(_PRIME256V1)), _context(1, _bits(key.point)))
        self[name] = (self._write(name + ".pem", _pem("CERTIFICATE", der)),
                      self._write(name + "-key.pem", _pem("EC PRIVATE KEY", private)))
        return self[name]

    def _write(self, filename, text):
        path = os.path.join(self.folder, filename)
        # Made with its final mode, so that a key is never readable by others even briefly,
        # and given it again, since a umask may have taken bits away.
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="ascii") as out:
            os.chmod(path, 0o600)
            out.write(text)
        return path
