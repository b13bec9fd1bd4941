"""Things that should not go into a public post: secrets, tokens and home-directory paths.

A net for accidents, not a guarantee: it reports findings (a provider's token, a password in
a URL or a command, a secret-looking value under a secret-like name, a home path), never
randomness alone, so digests, UUIDs, commit hashes and model ids pass. Every pattern is bounded
or anchored on a literal, so no input of 2 KiB makes the regular expressions backtrack for long.

Look-alike and invisible characters, percent-escapes and tokens wrapped over lines are read
folded too (see _folded_copies); a finding there is reported where it starts in the text as given.
"""

import re
import unicodedata
from functools import lru_cache

# A value after `=`, `:` or a flag: quoted (spaces allowed), or bare up to a separator. A bare
# value never starts with `$`, `{`, `<`, `(`, `[`, `-`, `=` or `:`, which open a reference,
# a template, a placeholder, code, another flag or a second operator, not a secret.
_VALUE = (r"""(?:"(?P<dq>[^"\n]{1,120})"|'(?P<sq>[^'\n]{1,120})'"""
          r"""|(?P<bare>[^\s'"`,;&<>(){}\[\]$=:-][^\s'"`,;&<>]{0,119}))""")

# Provider tokens carry a fixed prefix, so a match is a finding in itself. Each starts at a
# word boundary, so the same letters inside a longer base64 string do not count. A password in
# a URL is one too: a place's value is also checked for code, which "pw.Xy7z" would look like.
_TOKENS = (
    ("a private key block", r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----"),
    # A key's base64 pasted without its armour opens with the DER of a private key: a version
    # of 0 then an algorithm (PKCS#8, plain or encrypted), a version of 0 then the modulus (RSA),
    # a version of 1 (EC), or OpenSSH's magic. A certificate or public key opens otherwise. The
    # start is checked after the first character, for speed (see _compiled).
    ("a private key body", r"M(?<![A-Za-z0-9+/]M)(?:II[A-Za-z0-9+/]{3}IBA(?:DA|AK)|II[A-Za-z0-9+/]{5}BgkqhkiG9w0BBQ0w"
                           r"|IG[A-Za-z0-9+/]AgEAM|[CE][A-Za-z0-9+/]CAQAw|HcCAQEE|I[GH][A-Za-z0-9+/]AgEBB)"
                           r"[A-Za-z0-9+/]{40}"),
    ("a private key body", r"b(?<![A-Za-z0-9+/]b)3BlbnNzaC1rZXktdjE[A-Za-z0-9+/]{40}"),
    ("a PuTTY private key", r"\bPuTTY-User-Key-File-\d(?=: )"),
    ("an AWS access key id", r"\bA(?:KIA|SIA|BIA|CCA)[0-9A-Z]{16}\b"),
    ("a GitHub token", r"\bg(?:h[pousr]_[A-Za-z0-9]{36,}|ithub_pat_\w{22,})"),
    ("a GitLab token", r"\bgl(?:pat|dt|rt|ptt|cbt|ft|oas|soat|imt)-[\w-]{20,}"),
    ("a Slack token", r"\bx(?:ox[abposre]|app-\d)-[A-Za-z0-9-]{10,}"),
    ("a Slack webhook URL", r"\bhooks\.slack\.com/(?:services|workflows|triggers)/[\w/-]{20,}"),
    ("a Discord bot token", r"\b[MNO][\w-]{23,25}\.[\w-]{6}\.[\w-]{27,}"),
    ("a Discord webhook URL", r"\bdiscord(?:app)?\.com/api/webhooks/\d{1,20}/[\w-]{30,}"),
    # A bot's id, a colon, then exactly 35 characters: times and ratios have fewer digits. The
    # API's URLs put it right after "bot".
    ("a Telegram bot token", r"[0-9](?:(?<![\w:][0-9])|(?<=/bot[0-9]))[0-9]{7,9}:[A-Za-z0-9_-]{35}(?![\w-])"),
    ("a Twilio API key", r"\bSK[0-9a-fA-F]{32}\b"),
    # An account SID is public; the 32 hex digits given with it are its auth token.
    ("a Twilio auth token", r"\bAC[0-9a-fA-F]{32}\b[\s\S]{0,160}?\b([0-9a-fA-F]{32})\b"),
    ("a SendGrid API key", r"\bSG\.[\w-]{22}\.[\w-]{43}"),
    ("an npm token", r"\bnpm_[A-Za-z0-9]{36}"),
    ("a PyPI token", r"\bpypi-AgE[\w-]{50,}"),
    ("a Stripe secret key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{20,}"),
    ("a Stripe webhook secret", r"\bwhsec_[A-Za-z0-9]{24,}"),
    ("a Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}"),
    ("a Hugging Face token", r"\bapi_org_[A-Za-z0-9]{30,}"),
    ("a Google API key", r"\bAIza[\w-]{35}"),
    ("a Google OAuth client secret", r"\bGOCSPX-[\w-]{28}"),
    ("a Google OAuth access token", r"\bya29\.[\w-]{30,}"),
    ("an Azure AD client secret", r"(?<![\w.~-])[A-Za-z0-9_.~]{3}[0-9]Q~[A-Za-z0-9_.~-]{31,34}(?![\w~-]|\.[\w.~-])"),
    ("an Anthropic API key", r"\bsk-ant-[\w-]{20,}"),
    ("an OpenRouter API key", r"\bsk-or-v1-[0-9a-f]{64}"),
    # Only a digit, or the marker project keys carry, keeps hyphenated words such as
    # "sk-style-option-names" out.
    ("an OpenAI API key", r"\bsk-(?!ant-|or-)(?:proj-|svcacct-|admin-)?(?=[A-Za-z_-]{0,40}\d|[\w-]{0,160}T3BlbkFJ)"
                          r"[\w-]{20,}"),
    ("an ElevenLabs API key", r"\bsk_[0-9a-f]{48}\b"),
    ("a Groq API key", r"\bgsk_[A-Za-z0-9]{48,}"),
    ("a Replicate API token", r"\br8_[A-Za-z0-9]{37}"),
    ("a Perplexity API key", r"\bpplx-[A-Za-z0-9]{40,}"),
    ("an xAI API key", r"\bxai-[A-Za-z0-9]{60,}"),
    ("a Together API key", r"\btgp_v1_[\w-]{40,}"),
    ("a Fireworks API key", r"\bfw_[A-Za-z0-9]{24,}"),
    ("an Anyscale API key", r"\besecret_[A-Za-z0-9]{20,}"),
    ("a Cerebras API key", r"\bcsk-[A-Za-z0-9]{32,}"),
    ("a Voyage AI API key", r"\bpa-(?=[A-Za-z_-]{0,42}\d)[\w-]{43}(?![\w-])"),
    ("an NVIDIA API key", r"\bnvapi-[\w-]{40,}"),
    ("a Tavily API key", r"\btvly-(?:dev-|prod-)?[A-Za-z0-9]{24,}"),
    ("a Pinecone API key", r"\bpcsk_[A-Za-z0-9_]{40,}"),
    ("a LangSmith API key", r"\bls(?:v2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}|__[0-9a-f]{32})"),
    ("a Databricks token", r"\bdapi[0-9a-f]{32}\b"),
    ("an Azure storage account key", r"\bAccountKey=([A-Za-z0-9+/]{40,})"),
    ("an Azure shared access key", r"\bSharedAccessKey=([A-Za-z0-9+/]{30,})"),
    ("an Azure SAS signature", r"[?&;]sig=([A-Za-z0-9%+/]{20,})"),
    ("a JSON web token", r"\beyJ[\w-]{10,}\.eyJ[\w-]{10,}\.[\w-]{10,}"),
    # After the scheme (its slashes maybe escaped, as in JSON) and a user, up to the last @
    # before a space or a quote: an unencoded @, / or # may be part of the password. A port
    # followed by a path or a query is not one.
    ("a password in a URL", r":\\?/\\?/[^\s:/?#@\[\]\"'`<>]{0,64}:(?![0-9]{1,5}[/?#\\])([^\s\"'`<>]{4,128})@"),
)

# Home directories name a person and a machine. A path counts where it starts: not inside a
# URL's path ("example.org/home/notes") nor a longer path ("/data/home/x"), except after
# file://, which only a local path follows. The start is checked after the first character,
# for speed (see _compiled); a drive letter starts too many positions to gain from that.
_NOT_A_PERSON = r"(?!(?:Shared|Guest|Public|Default)\b)"
_HOMES = (
    re.compile(r"/(?:(?<![\w/.~-]/)|(?<=file:///))(?:home/[^/\s]|Users/" + _NOT_A_PERSON + r"[^/\s]|root/)"
               r"|/(?<![\w/.~-]/)(?:mnt/)?[a-z]/Users/" + _NOT_A_PERSON + r"[^/\s]"
               r"|~(?<![\w/.~-]~)/"),
    re.compile(r"\b[A-Za-z]:[\\/]{1,2}Users[\\/]{1,2}" + _NOT_A_PERSON + r"[^\\/\s]"),
)

# Where a credential sits in a known place, the place is the finding and the value only has to
# be real rather than a placeholder. `[^\n]{0,200}?` keeps a command on its line and bounds
# the search for its flag.
_COMMAND = r"[^\n]{0,200}?[ \t]"
_PASSWORD_COMMANDS = (
    r"\bsshpass\b" + _COMMAND + r"-p[ \t]*" + _VALUE,
    r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b" + _COMMAND + r"-p" + _VALUE,
    r"\bredis-cli\b" + _COMMAND + r"(?:-a|--pass)[ \t]+" + _VALUE,
    r"\b(?:docker|podman|nerdctl|helm|oras|skopeo|az|oc|cf|argocd)\b[^\n]{0,40}?\blogin\b" + _COMMAND
    + r"(?:-p|--password)(?:=|[ \t]+)" + _VALUE,
    r"\bmongo(?:sh|dump|restore)?\b" + _COMMAND + r"(?:-p|--password)(?:=|[ \t]+)" + _VALUE,
    r"\bcurl\b" + _COMMAND + r"(?:-u|--user)(?:=|[ \t]*)[\"']?[^\s:'\"$]{1,64}:" + _VALUE,
    r"-pass(?:in|out)?[ \t]+pass:" + _VALUE,
    # htpasswd -b takes a file, a user and a password; -n leaves the file out.
    r"\bhtpasswd(?=[-A-Za-z \t]{0,20}?-[A-Za-z]{0,4}b)(?:[ \t]+-[A-Za-mo-z]{1,5}){1,3}"
    r"[ \t]+\S{1,200}[ \t]+\S{1,64}[ \t]+" + _VALUE,
    r"\bhtpasswd(?:[ \t]+-[A-Za-z]{1,5}){0,2}[ \t]+-[A-Za-z]{0,3}(?:nb|bn)[A-Za-z]{0,3}[ \t]+\S{1,64}[ \t]+" + _VALUE,
    r"\b(?:sqlcmd|bcp|zip|unzip)\b" + _COMMAND + r"-P[ \t]*" + _VALUE,
    r"\b7z[a-z]?\b" + _COMMAND + r"-p" + _VALUE,
    r"\bldap(?:search|add|modify|delete|passwd|whoami)\b" + _COMMAND + r"-w[ \t]+" + _VALUE,
    r"\bssh-keygen\b" + _COMMAND + r"-[NP][ \t]+" + _VALUE,
    r"\b(?:smbclient|rpcclient|smbmap)\b" + _COMMAND + r"-U[ \t]*[\"']?[^\s%\"']{1,64}%" + _VALUE,
    r"\blftp\b" + _COMMAND + r"-u[ \t]+[\"']?[^\s,\"']{1,64}," + _VALUE,
    r"\bsqlplus[ \t]+(?:-[A-Za-z]+[ \t]+)?[^\s/@]{1,64}/(?P<bare>[^\s/@\"']{1,128})@",
    r"\brabbitmqctl[ \t]+(?:add_user|change_password)[ \t]+\S{1,64}[ \t]+" + _VALUE,
    r"\becho[ \t]+(?:-n[ \t]+)?" + _VALUE + r"[ \t]*\|[ \t]*sudo[ \t]+-S\b",
    r"-(?<![\w-]-)(?:store|key|srcstore|deststore|srckey|destkey)pass[ \t]+" + _VALUE,
    r"-(?<![\w-]-)D[\w.-]{0,80}?(?i:password|passwd)=" + _VALUE,
    r"\bmachine\s+\S{1,100}\s+login\s+\S{1,100}\s+password\s+" + _VALUE,
)
_PLACES = (
    ("a credential in an Authorization header",
     r"\b[Aa](?i:uthorization)[\"']?[ \t]*[:=][ \t]*[\"']?"
     r"(?i:bearer|basic|token|bot|digest)[ \t]+(?P<bare>[^\s\"'`,;<>{}$][^\s\"'`,;]{7,119})"),
    *(("a password in a command", pattern) for pattern in _PASSWORD_COMMANDS),
    ("a W&B API key", r"\bwandb[ \t]+login\b[^\n]{0,60}?[ \t](?:local-)?(?P<bare>[0-9a-f]{40})\b"),
)

# Any NAME=value, NAME: value, "name": "value" or --name value, anywhere on a line. The name
# decides whether the value is looked at at all. The value is read ahead, not consumed, so
# in "run: HF_TOKEN=..." the search goes on from "HF_TOKEN". Where a name or a flag may start
# is checked after its first character, for speed (see _compiled).
_ASSIGNMENT = re.compile(r"(?P<name>[A-Za-z_](?<![\w.$:-][A-Za-z_])[\w.-]{0,63})[\"']?\]?[ \t]*[:=][ \t]*"
                         r"(?=" + _VALUE + ")")
_FLAG = re.compile(r"-(?<![\w-]-)-(?P<name>[A-Za-z][\w-]{0,63})(?:=|[ \t]+)(?=" + _VALUE + ")")

# A name is secret-like by its last word ("OPENAI_API_KEY", "apiKey", "PGPASSWORD"): the word
# ends with one of the long names, or is one of the short ones, which "monkey", "bypass" and
# "oauth" end with too. Words that only say which one ("DB_PASSWORD_PROD") are passed over.
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_PASSWORD_NAMES = ("password", "passwd", "passphrase")
_PASSWORD_WORDS = frozenset(("pass", "pwd", "pw"))
_SECRET_NAMES = ("secret", "token", "apikey", "accesskey", "secretkey", "privatekey", "credential",
                 "credentials", "cookie", "sessionid", "authorization")
_SECRET_WORDS = frozenset(("key", "auth", "session", "private", "pat"))
_WHICH_ONE = frozenset(("prod", "production", "dev", "development", "staging", "stage", "test", "local", "live",
                        "old", "new", "current", "previous", "next", "primary", "secondary", "backup", "main",
                        "root", "admin", "value"))
# The tokens of a tokenizer and the keys of a table share the words of secrets.
_NOT_SECRET = {
    "key": frozenset(("public", "pub", "sort", "cache", "primary", "partition", "hash", "foreign",
                      "answer", "label", "group", "shard", "dedup", "idempotency")),
    "token": frozenset(("max", "min", "num", "pad", "eos", "bos", "unk", "sep", "cls", "mask",
                        "special", "stop", "start", "end", "page", "next", "continuation")),
}

# Substrings, not one regular expression of alternatives: `in` is many times faster, and a
# hostile post can hold hundreds of values to look at.
_PLACEHOLDER_PARTS = ("${", "$(", "{{", "...", "\u2026", "***", "xxxx", "example", "sample", "placeholder",
                      "your", "redacted", "dummy", "fake", "changeme", "change_me", "replace", "insert",
                      "environ", "getenv", "process.env", "secrets.", "password", "passwd")
_WINDOWS_VARIABLE = re.compile(r"%[A-Z][A-Z0-9_]*%")
_PLACEHOLDER_WORDS = frozenset((
    "none", "null", "nil", "undefined", "true", "false", "yes", "no", "on", "off", "empty",
    "unset", "notset", "required", "optional", "default", "string", "str", "bytes", "secretstr",
    "secret", "token", "apikey", "api_key", "key", "test", "testing",
    "hidden", "masked", "omitted", "removed", "todo", "tbd", "n/a"))
# A call, a subscript or an attribute stands where a secret would, in a snippet.
_CODE = re.compile(r"[A-Za-z_][\w.]*[(\[]|[A-Za-z_]\w*\.[A-Za-z_]")
# A snake_case value under a password's name is the variable that holds it.
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+")
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]{16,}")
_DIGIT_RUN = re.compile(r"[0-9]+")
_LOWER_RUN = re.compile(r"[a-z]+")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LETTERS = _LOWER | _UPPER
_DIGITS = frozenset("0123456789")
_ALNUM = _LETTERS | _DIGITS
_HEX = frozenset("0123456789abcdefABCDEF-")


def _kind_of_name(name: str):
    """What a value under this name would be: "password", "secret", or None."""
    words = _NAME_WORDS.findall(name)
    while len(words) > 1 and words[-1].lower() in _WHICH_ONE:
        words.pop()
    last = words[-1].lower() if words else ""
    if last in _PASSWORD_WORDS or last.endswith(_PASSWORD_NAMES):
        return "password"
    if last in _SECRET_WORDS or last.endswith(_SECRET_NAMES):
        before = words[-2].lower() if len(words) > 1 else ""
        return None if before in _NOT_SECRET.get(last, ()) else "secret"
    return None


def _is_real(value: str) -> bool:
    """Not a placeholder, a reference to a variable or a template, nor a number."""
    low = value.lower()
    if (value[0] in "${<" or value != value.strip() or value.isdigit() or low in _PLACEHOLDER_WORDS
            or "%" in value and _WINDOWS_VARIABLE.search(value)):
        return False
    # A placeholder's part counts in one case or capitalised: the same letters in mixed case
    # ("yOuR") are part of a random key.
    for part in _PLACEHOLDER_PARTS:
        at = low.find(part)
        while at >= 0:
            if value[at:at + len(part)] in (part, part.upper(), part.capitalize()):
                return False
            at = low.find(part, at + 1)
    return True


def _looks_secret(value: str, kind: str) -> bool:
    if not _is_real(value) or _CODE.match(value) or " " in value:
        return False
    # Sets and regular expressions rather than loops over characters, for the hostile post
    # with hundreds of values.
    used = set(value)
    letters, digits = not used.isdisjoint(_LETTERS), not used.isdisjoint(_DIGITS)
    if kind == "password":
        return len(value) >= 6 and letters and (digits or not used <= _ALNUM) and not _IDENTIFIER.fullmatch(value)
    # A URL's password is the URL rule's to find; a path has no long random run below.
    if len(value) < 16 or "://" in value:
        return False
    if used <= _HEX:
        return letters and digits and len(used) >= 8
    # Base64 and URL-safe tokens switch case every few letters, even where - and _ cut them:
    # lower-case letters come in runs of 3 or fewer on average, unlike in CamelCase names and
    # model ids ("CloudWatchSession", "Llama-3.1-8B-Instruct").
    if not used.isdisjoint(_LOWER) and not used.isdisjoint(_UPPER):
        runs = _LOWER_RUN.findall(value)
        if sum(map(len, runs)) <= 3 * len(runs):
            return True
    # Digits scattered through a long run of letters: random, unlike "PKCS7PrivateKey" or a
    # version joined by separators.
    for run in _ALNUM_RUN.findall(value):
        if len(set(run)) >= 10 and len(_DIGIT_RUN.findall(run)) >= 3 and not set(run) <= _DIGITS:
            return True
    # Long keys drawn from letters, digits and symbols (Django's, say) have no long plain run;
    # names and ids ("main--test--<uuid>", "run_2024-11.v2") join words with few separators.
    return len(value) >= 24 and len(used) >= 20 and len(used - _ALNUM - set("-_./:")) >= 3


def _value(match):
    name = match.lastgroup  # the value's: "dq", "sq" or "bare"
    value = match.group(name)
    if name == "bare":
        # Punctuation that ends a sentence or closes a call is not part of a bare value.
        value = value.rstrip(".,:)]}") or value
    return value, match.start(name), match.start(name) + len(value)


# The regular expression engine skips ahead to a pattern's first character when that is a
# literal or a set, but tries every position of a pattern that opens with \b; so the
# boundary is checked just after the first character instead, several times faster.
_LEADING_BOUNDARY = re.compile(r"^\\b(\w|\[\w+\])")


def _compiled(pattern):
    return re.compile(_LEADING_BOUNDARY.sub(r"\1(?<!\\w\1)", pattern, count=1))


_TOKEN_PATTERNS = tuple((what, _compiled(pattern)) for what, pattern in _TOKENS)
_PLACE_PATTERNS = tuple((what, _compiled(pattern)) for what, pattern in _PLACES)


# The Cyrillic and Greek letters that pass for Latin ones in a token's prefix.
_LOOK_ALIKES = str.maketrans("аеорсухѕіјһԁкАВЕКМНОРСТХЅІЈУαορνικυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
                             "aeopcyxsijhdkABEKMHOPCTXSIJYaopvikuxABEZHIKMNOPTYX")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
# Only an escape of a printable character is decoded: others could not be part of a token.
_PERCENT = re.compile(r"%(?:[2-6][0-9A-Fa-f]|7[0-9A-Ea-e])")
# A line that ends in the middle of a token, maybe before a backslash, and a next line that
# ends it, after some indentation: the rest of the line closes a quote or a sentence at most.
_WRAPPED = re.compile(r"[A-Za-z0-9_+/=-]{16}\\?\Z")
_CONTINUED = re.compile(r"([ \t]{0,40})[A-Za-z0-9_+/=-]{4,}(?=[\"'`,;)\]}@&]|\.?[ \t]*\Z)")
# Whether any line may wrap, to leave most texts unfolded at the cost of one search.
_MAY_WRAP = re.compile(r"[A-Za-z0-9_+/=-]{16}\\?\n")


@lru_cache(maxsize=4096)
def _folded_character(character: str) -> str:
    if unicodedata.category(character) == "Cf":
        return ""
    return unicodedata.normalize("NFKC", character).translate(_LOOK_ALIKES)


def _folded_line(line: str, start: int):
    """The line folded, and where in the text each of its characters comes from (None where
    folding changes nothing)."""
    if line.isascii() and not ("%" in line and _PERCENT.search(line)):
        return line, None
    pieces, origin, at = [], [], 0
    for match in _NON_ASCII.finditer(line):
        folded = _folded_character(match.group())
        pieces += (line[at:match.start()], folded)
        origin += range(start + at, start + match.start())
        origin += [start + match.start()] * len(folded)
        at = match.end()
    pieces.append(line[at:])
    origin += range(start + at, start + len(line))
    folded, decoded, kept, at = "".join(pieces), [], [], 0
    for match in _PERCENT.finditer(folded):
        decoded += (folded[at:match.start()], chr(int(match.group()[1:], 16)))
        kept += origin[at:match.start() + 1]
        at = match.end()
    return "".join(decoded) + folded[at:], kept + origin[at:]


def _folded_copies(text: str) -> list:
    """The folded copies to read, each with where its characters come from in the text and whether
    its findings may need a name. One holds the lines folding changes. The other holds the tokens
    wrapped over lines, joined, and those over three lines or more again without their first line
    (which may end in a word of its own); a value under a name would run on into the next line
    there, so only the findings that need no name count."""
    if text.isascii() and not _PERCENT.search(text) and not _MAY_WRAP.search(text):
        return []
    lines, start = [], 0
    for line in text.split("\n"):
        lines.append(_folded_line(line, start) + (start,))
        start += len(line) + 1
    by_line, joined, chain, indent = ([], []), ([], []), [], 0
    for number, (folded, offsets, start) in enumerate(lines):
        if offsets is not None:
            _append(by_line, [(folded, offsets, start)])
        following = (number + 1 < len(lines) and _WRAPPED.search(folded, max(0, len(folded) - 17))
                     and _CONTINUED.match(lines[number + 1][0]))
        end = len(folded) - folded.endswith("\\") if following else len(folded)
        whole = range(start, start + len(folded)) if offsets is None else offsets
        chain.append((folded[indent:end], whole[indent:end], start))
        if following:
            indent = following.end(1)
            continue
        if len(chain) > 1:
            _append(joined, chain)
        if len(chain) > 2:
            _append(joined, chain[1:])
        chain, indent = [], 0
    return [("".join(pieces), origin, names) for (pieces, origin), names in ((by_line, True), (joined, False))
            if pieces]


def _append(copy, chain):
    pieces, origin = copy
    if pieces:
        # A line of its own, as in the text: the newline stands for the one before its line.
        pieces.append("\n")
        origin.append(chain[0][2] - 1)
    for piece, offsets, _ in chain:
        pieces.append(piece)
        origin += offsets


def _findings(text: str) -> list:
    """Each finding as ``(start, end, rank, what)``, in no order."""
    found = []
    for what, pattern in _TOKEN_PATTERNS:
        for match in pattern.finditer(text):
            group = match.lastindex or 0
            if _is_real(match.group(group)):
                found.append((match.start(group), match.end(group), 0, what))
    found += [(match.start(), match.end(), 0, "a home-directory path")
              for pattern in _HOMES for match in pattern.finditer(text)]
    for what, pattern in _PLACE_PATTERNS:
        for match in pattern.finditer(text):
            value, start, end = _value(match)
            if len(value) >= 4 and _is_real(value) and not _CODE.match(value):
                found.append((start, end, 1, what))
    for pattern, prefix in ((_ASSIGNMENT, ""), (_FLAG, "--")):
        for match in pattern.finditer(text):
            kind = _kind_of_name(match.group("name"))
            if kind:
                value, start, end = _value(match)
                if _looks_secret(value, kind):
                    found.append((start, end, 2, f"a secret value for {prefix}{match.group('name')}"))
    return found


def find_sensitive(text: str) -> list:
    """Each finding as ``(what, line, column)``, 1-based, in the order they appear."""
    # (start, end, rank, what): where findings overlap, the lowest rank names the finding, so
    # OPENAI_API_KEY=sk-... is reported as an OpenAI key, not as a secret-looking value.
    found = _findings(text)
    for copy, origin, names in _folded_copies(text):
        found += [(origin[start], origin[end - 1] + 1, rank, what) for start, end, rank, what in _findings(copy)
                  if rank == 0 or names]
    findings, reached = [], -1
    for start, end, _, what in sorted(found, key=lambda finding: (finding[0], finding[2])):
        if start >= reached:
            findings.append((what, text.count("\n", 0, start) + 1, start - text.rfind("\n", 0, start)))
        reached = max(reached, end)
    return findings
