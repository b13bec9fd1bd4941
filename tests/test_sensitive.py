"""The check for private data in a post: what it catches, what it lets through, where it
points, and that it ends on hostile input. Speed is measured by ``python3 -m tests.secret_corpus``."""

import base64
import random

import pytest

from benchmarks_wiki.sensitive import find_sensitive
from tests.secret_corpus import (ALNUM, FAMILIES, HEX, LIMIT, LOWER_DIGITS, SEED, UPPER_DIGITS, URLSAFE,
                                 adversarial_inputs, caught, chars, ordinary_posts, secret_posts)

RNG = random.Random(SEED)
DIGEST = chars(RNG, HEX, 64)
COMMIT = chars(RNG, HEX, 40)
AWS = "AKIA" + chars(RNG, UPPER_DIGITS, 16)
GITHUB = "ghp_" + chars(RNG, ALNUM, 36)
HF = "hf_" + chars(RNG, ALNUM, 34)
OPENAI = "sk-proj-" + chars(RNG, URLSAFE, 60) + "7"
TOKEN = chars(RNG, ALNUM, 40)
PASSWORD = chars(RNG, ALNUM, 10) + "7!"
AZURE_AD = chars(RNG, ALNUM, 3) + "8Q~" + chars(RNG, ALNUM + "_.~-", 34)
TELEGRAM = "7012345678:" + chars(RNG, URLSAFE, 35)
HEX32 = chars(RNG, HEX, 32)


def test_secret_bearing_posts_are_caught():
    posts = secret_posts()
    assert len(posts) >= 150
    missed = [(family, post) for family, post, lines in posts if not caught(post, lines)]
    assert len(missed) <= 0.15 * len(posts), missed
    claimed = [family for family, _ in missed if family in FAMILIES]
    assert len(claimed) <= 0.01 * len(posts), claimed


def test_ordinary_posts_are_not_refused():
    posts = ordinary_posts()
    assert len(set(posts)) >= 400
    assert all(len(post.encode()) <= LIMIT for post in posts)
    refused = [(post, find_sensitive(post)) for post in posts if find_sensitive(post)]
    assert len(refused) <= 0.01 * len(posts), refused


@pytest.mark.parametrize("body", [
    "public_key=AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
    "page_token: CiAKGjBpNDd2Nmp5Z2FxaTRicGEQ",
])
def test_a_two_word_name_whose_first_word_makes_it_ordinary_lets_its_value_through(body):
    assert find_sensitive(body) == []


def test_a_windows_variable_under_a_password_name_is_a_placeholder():
    assert find_sensitive("set PGPASSWORD=%PG_PASS%") == []


@pytest.mark.parametrize("value, caught", [
    ("k9v2xq", True),
    ("k9v2x", False),
])
def test_a_password_counts_from_six_characters(value, caught):
    assert find_sensitive(f"PGPASSWORD={value}") == ([("a secret value for PGPASSWORD", 1, 12)] if caught else [])


@pytest.mark.parametrize("body", ["password=...", "api_key: ...", "Set DB_PASSWORD=... before the run."])
def test_a_value_of_punctuation_alone_is_not_a_secret(body):
    assert find_sensitive(body) == []


def test_a_finding_that_starts_where_another_ends_is_reported_too():
    assert find_sensitive(f"cat ~/{HF}") == [("a home-directory path", 1, 5), ("a Hugging Face token", 1, 7)]


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_is_caught(family):
    rng = random.Random(f"{SEED} {family}")
    for _ in range(5):
        snippet = FAMILIES[family](rng)
        assert find_sensitive(snippet), snippet


@pytest.mark.parametrize("body", [
    "Setup: meta-llama/Llama-3.1-8B-Instruct, temperature 0.7",
    "Task: 317ef6cc-69a8-59a3-a347-e37d3399eb10",
    "Model: claude-3-5-sonnet-20241022\nModel: gpt-4o-2024-08-06\nModel: Qwen/Qwen2.5-7B",
    f"```yaml\nmodel: meta-llama/Llama-3.1-8B-Instruct\ndataset: openai/gsm8k\nrevision: {COMMIT}\nseed: 1234\n"
    f"temperature: 0.7\nmax_tokens: 1024\ntokenizer: Qwen/Qwen2.5-7B\npad_token: \"<|endoftext|>\"\n```",
    f"Image: ghcr.io/princeton-nlp/swe-bench:latest@sha256:{DIGEST}",
    "CUDA_VISIBLE_DEVICES=0,1 HF_HOME=/data/hf TOKENIZERS_PARALLELISM=false python eval.py",
    f"Data: https://huggingface.co/datasets/openai/gsm8k\nPaper: https://arxiv.org/abs/2110.14168\n"
    f"Fix: https://github.com/openai/human-eval/commit/{COMMIT}",
    'client = OpenAI(base_url="http://localhost:8000/v1", api_key="EMPTY")',
    'api_key=os.environ["OPENAI_API_KEY"]; curl -H "Authorization: Bearer $HF_TOKEN" https://example.org',
    "export HF_TOKEN=<your token>\ntoken: ${{ secrets.HF_TOKEN }}\npassword: ********",
    '{"task_id": "cc72a209-7303-5e8f-8399-7bfd4bdef1db", "key": "main--test--cc72a209-7303-5e8f-8399-7bfd4bdef1db"}',
    "Colours #1f77b4 and #ff7f0e; seed 18446744073709551557; record eyJxdWVzdGlvbiI6ICIyKzI/In0=",
    "Outputs in /workspace/runs and D:\\data\\gsm8k; cache at $HOME/.cache; see https://example.org/home/notes",
    "vllm serve Qwen/Qwen2.5-7B-Instruct --api-key EMPTY --max-model-len 8192",
    "docker run -e POSTGRES_PASSWORD=changeme123 postgres:16",
    'db_password = read_secret("db")',
])
def test_ordinary_text_is_not_refused(body):
    assert find_sensitive(body) == []


@pytest.mark.parametrize("body, found", [
    ("key " + AWS, [("an AWS access key id", AWS)]),
    ("Result: 3/5\n  export GITHUB_TOKEN=" + GITHUB, [("a GitHub token", GITHUB)]),
    ("OPENAI_API_KEY=" + OPENAI, [("an OpenAI API key", OPENAI)]),
    ("DB_PASSWORD=" + PASSWORD, [("a secret value for DB_PASSWORD", PASSWORD)]),
    ('judge:\n  "api_key": "' + TOKEN + '"', [("a secret value for api_key", TOKEN)]),
    (f"psql postgres://evals:{PASSWORD}@db:5432/runs", [("a password in a URL", PASSWORD)]),
    ("git clone https://user:pass@example.org/x.git", [("a password in a URL", "pass@")]),
    (f"curl -H 'Authorization: Bearer {TOKEN}' https://api.example.org",
     [("a credential in an Authorization header", TOKEN)]),
    (f"sshpass -p '{PASSWORD}' ssh gpu-1", [("a password in a command", PASSWORD)]),
    (f"mysql -u root -p{PASSWORD} results", [("a password in a command", PASSWORD)]),
    ('Trace: File "/Users/alice/run.py", line 3', [("a home-directory path", "/Users")]),
    ("from C:\\Users\\Bob\\runs and /mnt/c/Users/bob/runs",
     [("a home-directory path", "C:"), ("a home-directory path", "/mnt")]),
    (f"Modèle : {HF}\n\tpath ~/.cache", [("a Hugging Face token", HF), ("a home-directory path", "~/")]),
    (f"run: HF_TOKEN={HF} python x.py --password {PASSWORD}",
     [("a Hugging Face token", HF), ("a secret value for --password", PASSWORD)]),
])
def test_findings_name_what_and_where(body, found):
    """Each finding points, by 1-based line and column in characters, at where its text starts."""
    lines = body.split("\n")
    where = [next((number, line.index(text) + 1) for number, line in enumerate(lines, 1) if text in line)
             for _, text in found]
    assert find_sensitive(body) == [(what, *place) for (what, _), place in zip(found, where)]


@pytest.mark.parametrize("value, caught", [
    ("kzqwmvrtplxn4hjs7bgd9yfc", True),
    ("kzqwmvrtplxn4hjs7bgdyfcw", False),
])
def test_three_digit_groups_scattered_through_a_long_run_of_letters_make_it_a_key(value, caught):
    # Lower case only, so that the value is judged by its digits alone and not by its mix of cases.
    assert find_sensitive(f"api_key={value}") == ([("a secret value for api_key", 1, 9)] if caught else [])


@pytest.mark.parametrize("value, caught", [
    ("VqzkTpmnRxdbWsjh", True),
    ("VqzkTpmnRxdbWsjhk", False),
    ("CloudWatchEvalSession", False),
])
def test_mixed_case_makes_a_key_where_lower_case_letters_run_three_or_fewer_on_average(value, caught):
    # No digits and under 24 characters, so that only the runs of lower-case letters decide.
    assert find_sensitive(f"api_key={value}") == ([("a secret value for api_key", 1, 9)] if caught else [])


@pytest.mark.parametrize("value, caught", [
    ("4f2a9c1e7b3d5a86", True),
    ("4f2a9c1e7b3d5a8", False),
])
def test_a_value_under_a_secret_name_needs_sixteen_characters(value, caught):
    assert find_sensitive(f"session={value}") == ([("a secret value for session", 1, 9)] if caught else [])


@pytest.mark.parametrize("value, caught", [
    ("0F4B2C9E-A13D-57E8-bcdafe-6071", True),
    ("2024-11-05-14-30-00", False),
    ("deadbeef-cafe-face", False),
    ("7a2f9e4b27fe94ab", True),   # eight different characters
    ("0123abcd0123abcd", True),
    ("7a2f9e4a27fe94a2", False),  # seven
    ("0123abc0123abc01", False),
])
def test_a_hex_value_is_a_key_when_it_has_letters_digits_and_eight_different_characters(value, caught):
    # The first uses every hex digit in both cases and the hyphen; its lower-case letters come
    # in one long run, so only the rule for hex values finds it.
    assert find_sensitive(f"api_key={value}") == ([("a secret value for api_key", 1, 9)] if caught else [])


@pytest.mark.parametrize("quoted, caught", [
    ("'q7m#k2vx9z!w4tn@b8rjq7mk'", True),   # 24 characters, 20 different, 3 symbols
    ("'q7m#k2vx9z!w4tn@b8rjq7m'", False),   # 23 characters
    ("'q7m#k2vx9z!w4tn@b8rqq7mk'", False),  # 19 different
    ("'q7m#k2vx9z!w4tnhb8rjq7mk'", False),  # 2 symbols
    ('"q8#we3!rt^y9*u+io2@pq8#w"', True),
    ('"q8#we3!rt^y9*u+io2@pq8#"', False),
    ('"q8#we3!rt^y9*u+io2qpq8#w"', False),
])
def test_a_key_of_symbols_needs_24_characters_20_different_and_3_symbols(quoted, caught):
    assert find_sensitive(f"SECRET_KEY = {quoted}") == ([("a secret value for SECRET_KEY", 1, 15)] if caught else [])


@pytest.mark.parametrize("body, found", [
    ("The demo account's password: swordfish.", []),
    ("PGPASSWORD='swordfish.'", [("a secret value for PGPASSWORD", 1, 13)]),
])
def test_a_bare_value_ends_before_a_full_stop_and_a_quoted_value_keeps_it(body, found):
    # Without its full stop, a password of letters alone is not random enough to refuse.
    assert find_sensitive(body) == found


def test_columns_count_characters_from_one():
    assert find_sensitive("é\n\tcd /home/alice && ls ~/") == [("a home-directory path", 2, 5),
                                                                ("a home-directory path", 2, 23)]


@pytest.mark.parametrize("text", adversarial_inputs(), ids=lambda text: repr(text[:12]))
def test_hostile_input_returns(text):
    assert isinstance(find_sensitive(text), list)


def test_a_provider_key_that_begins_like_a_home_directory_is_named_as_the_key():
    # Base64 may begin with "/home/", so an account key and a home path can start together.
    key = "/home/q8ZrVt3kLm2Xw9PbN4sJd7HfYc1GaE6uTo5RiKeM0nBvWxQzUyS+lA8pCgD3hF2jK9mN4bV7cX1zQ=="
    body = f"DefaultEndpointsProtocol=https;AccountName=evals;AccountKey={key}"
    assert find_sensitive(body) == [("an Azure storage account key", 1, body.index(key) + 1)]


def test_a_quoted_value_holding_a_provider_key_is_reported_once_where_it_starts():
    key = "q8ZrVt3kLm2Xw9PbN4sJd7HfYc1GaE6uTo5RiKeM0nBvWxQzUyS+lA8pCgD3hF2jK9mN4bV7cX1zQ/aBcDeFgH=="
    # The whole quoted value is a secret under its name; the key inside it ends first but
    # starts later, and the finding that starts first is the one reported.
    body = f'AZURE_STORAGE_KEY="AccountName=evals;AccountKey={key}"'
    assert find_sensitive(body) == [("a secret value for AZURE_STORAGE_KEY", 1, 20)]


def where(body, text):
    """The 1-based line and column where ``text`` first appears in ``body``."""
    lines = body.split("\n")
    return next((number, line.index(text) + 1) for number, line in enumerate(lines, 1) if text in line)


@pytest.mark.parametrize("body, secret", [
    (f"postgres://evals:{PASSWORD}@db:5432/runs", PASSWORD),
    ("mysql+pymysql://root:Zq8.Ab3x@db/results", "Zq8.Ab3x"),         # a dot, as in an attribute
    ("mongodb+srv://evals:Hk3#pq9/Z@cluster0.mongodb.net/", "Hk3#pq9/Z"),  # symbols left unencoded
    ("redis://:s3cr3t@Xk9@cache:6379/0", "s3cr3t@Xk9"),                  # up to the last @
    ('{"dsn": "amqp:\\/\\/guest:Rb7xQ2pL@mq:5672\\/"}', "Rb7xQ2pL"),  # JSON's escaped slashes
    ('DATABASE_URL="postgresql+psycopg2://evals:Pw9xk2Lm@10.0.3.7/results"', "Pw9xk2Lm"),
])
def test_a_password_in_a_database_url_is_found_whatever_its_scheme_and_symbols(body, secret):
    assert find_sensitive(body) == [("a password in a URL", *where(body, secret))]


@pytest.mark.parametrize("body", [
    "postgres://evals@db:5432/runs", "redis://cache:6379/0", "https://localhost:8000/v1/@alice",
    "https://example.org:8443?next=me@example.org", "postgres://u:<password>@db/x", "postgres://u:****@db/x",
    "postgres://u:${DB_PASS}@db/x", "postgres://u:$DB_PASS@db/x", "postgres://u:your-password-here@db/x",
    # The default in docker images' docs, written to be replaced.
    "postgres://u:changeme@db/x", "pip install git+ssh://git@github.com:org/repo@v1.2",
])
def test_a_url_with_no_password_a_placeholder_or_a_port_is_not_refused(body):
    assert find_sensitive(body) == []


@pytest.mark.parametrize("name, kind", [
    ("DB_PASS", "password"), ("PASSWORD", "password"), ("db_pw", "password"), ("DB_PASSWORD_PROD", "password"),
    ("PG_PASS_STAGING", "password"), ("adminPassword", "password"),
    ("SECRET", "secret"), ("client_secret", "secret"), ("APP_SECRET_KEY", "secret"), ("JWT_SECRET_NEW", "secret"),
    ("PASSWORD_HASH", None), ("SECRET_NAME", None), ("password_file", None), ("secret_prod_name", None),
])
def test_a_name_says_secret_by_its_last_word_after_words_that_only_say_which_one(name, kind):
    value = PASSWORD if kind == "password" else TOKEN
    found = find_sensitive(f"{name}={value}\n  {name.lower()}: {value}")
    assert found == ([(f"a secret value for {name}", 1, len(name) + 2),
                      (f"a secret value for {name.lower()}", 2, len(name) + 5)] if kind else [])


@pytest.mark.parametrize("body", [
    f"python upload.py --password {PASSWORD}", f"wget --user=evals --password={PASSWORD} https://example.org/x",
    f"sshpass -p'{PASSWORD}' scp preds.jsonl gpu-1:", f"PGPASSWORD={PASSWORD} psql -h db -U evals",
    f"mysql -u root -p{PASSWORD} results", f'psql "postgresql://evals:{PASSWORD}@db/runs" -c "select 1"',
    f"htpasswd -b -c .htpasswd alice {PASSWORD}", f"htpasswd -nb alice {PASSWORD}",
    f"sqlcmd -S db -U sa -P {PASSWORD} -Q 'SELECT 1'", f"ldapsearch -x -D cn=admin -w {PASSWORD} -b dc=evals",
    f"echo '{PASSWORD}' | sudo -S nvidia-smi", f"java -Djavax.net.ssl.keyStorePassword={PASSWORD} -jar judge.jar",
    f"keytool -list -keystore ks.jks -storepass {PASSWORD}", f"smbclient //nas/evals -U alice%{PASSWORD}",
    f"rabbitmqctl add_user alice {PASSWORD}", f"7z x runs.7z -p{PASSWORD}", f"unzip -P {PASSWORD} runs.zip",
    f"az login --service-principal -u app -p {PASSWORD} --tenant t", f"sqlplus scott/{PASSWORD}@evals",
])
def test_a_password_given_to_a_command_is_found_where_it_starts(body):
    [(_, line, column)] = find_sensitive(body)
    assert (line, column) == where(body, PASSWORD)


@pytest.mark.parametrize("body", [
    'python upload.py --password "$PW"', "python upload.py --password=${PW}", "mysql -u root -p results",
    "htpasswd -c .htpasswd alice then restart nginx", "echo \"$PW\" | sudo -S true", "unzip -P \"$ZIP_PW\" x.zip",
])
def test_a_password_flag_given_a_variable_or_nothing_is_not_refused(body):
    assert find_sensitive(body) == []


@pytest.mark.parametrize("body, found", [
    (f"TELEGRAM_BOT_TOKEN={TELEGRAM}", True),
    (f"curl https://api.telegram.org/bot{TELEGRAM}/getUpdates", True),
    (f"token {TELEGRAM[:-1]}", False),                     # 34 characters after the colon
    (f"token {TELEGRAM}x", False),                         # 36
    (f"token 1{TELEGRAM}", False),                         # 11 digits
    ("at 12:30:45 on 2026-12-01T10:15:02, ratio 3:2, id 1234567890:abc", False),
])
def test_a_telegram_token_is_eight_to_ten_digits_a_colon_and_35_characters(body, found):
    assert find_sensitive(body) == ([("a Telegram bot token", *where(body, TELEGRAM[:8]))] if found else [])


@pytest.mark.parametrize("body, found", [
    (f"AZURE_CLIENT_SECRET={AZURE_AD}", True),
    (f"The app's secret is {AZURE_AD}.", True),
    (f"The app's secret is {AZURE_AD[:-4]} here", False),  # 30 characters after the tilde
    (f"path a{AZURE_AD}", False),                          # inside a longer word
])
def test_an_azure_ad_client_secret_is_four_characters_q_tilde_and_31_to_34_more(body, found):
    assert find_sensitive(body) == ([("an Azure AD client secret", *where(body, AZURE_AD[:6]))] if found else [])


@pytest.mark.parametrize("body, secret", [
    (f"TWILIO_API_KEY=SK{HEX32.upper()}", "SK"),
    (f'client = Client("AC{COMMIT[:32]}", "{HEX32}")', HEX32),
    (f"curl https://api.twilio.com/2010-04-01/Accounts/AC{COMMIT[:32]}/Calls.json -u AC{COMMIT[:32]}:{HEX32}", HEX32),
])
def test_a_twilio_key_in_either_case_and_a_token_beside_its_account_are_found(body, secret):
    [(what, *place)] = find_sensitive(body)
    assert what.startswith("a Twilio") and tuple(place) == where(body, secret)


def test_an_account_sid_alone_is_not_refused():
    assert find_sensitive(f"Account: AC{HEX32}") == []


@pytest.mark.parametrize("what, key", [
    ("a Fireworks API key", "fw_" + chars(RNG, ALNUM, 24)),
    ("an Anyscale API key", "esecret_" + chars(RNG, ALNUM, 26)),
    ("a Cerebras API key", "csk-" + chars(RNG, LOWER_DIGITS, 48)),
    ("a Voyage AI API key", "pa-" + chars(RNG, ALNUM, 21) + "7" + chars(RNG, URLSAFE, 21)),
    ("an ElevenLabs API key", "sk_" + chars(RNG, HEX, 48)),
    ("an NVIDIA API key", "nvapi-" + chars(RNG, URLSAFE, 64)),
    ("a Tavily API key", "tvly-dev-" + chars(RNG, ALNUM, 32)),
    ("a Pinecone API key", "pcsk_" + chars(RNG, ALNUM, 6) + "_" + chars(RNG, ALNUM, 63)),
    # No digit in the first 40 characters: the project marker alone makes it a key.
    ("an OpenAI API key", "sk-proj-" + chars(RNG, "abcdefXYZ_-", 74) + "T3BlbkFJ" + chars(RNG, URLSAFE, 74)),
    ("an Anthropic API key", "sk-ant-admin01-" + chars(RNG, URLSAFE, 93) + "AA"),
])
def test_each_provider_key_is_named_where_it_starts(what, key):
    body = f"The judge used {key} here."
    assert find_sensitive(body) == [(what, 1, 16)]


@pytest.mark.parametrize("body", ["pa-" + "x" * 43, "sk_" + "deadbeef" * 5, "see fw_config and tvly-search",
                                  "csk-" + "a" * 20])
def test_words_with_a_provider_prefix_but_not_its_shape_are_not_refused(body):
    assert find_sensitive(body) == []


@pytest.mark.parametrize("token, found", [
    ("hf_k9QyOuRh" + chars(RNG, ALNUM, 26), True),       # "your" in mixed case, by chance
    ("hf_yourTokenGoesHereAbcdefghijklmnopq", False),
    ("hf_YOUR_TOKEN_HERE_abcdefghijklmnopqrst", False),
])
def test_a_placeholder_word_counts_in_one_case_or_capitalised_not_in_the_mixed_case_of_a_random_key(token, found):
    assert bool(find_sensitive(f"HF_TOKEN={token}")) is found


def full_width(text):
    return "".join(chr(ord(c) + 0xFEE0) for c in text)


@pytest.mark.parametrize("body, what, place", [
    (f"token {GITHUB[:9]}\u200b{GITHUB[9:]}", "a GitHub token", (1, 7)),
    (f"token {GITHUB[:4]}\u2060{GITHUB[4:20]}\ufeff{GITHUB[20:]}", "a GitHub token", (1, 7)),
    (f"token {HF[:12]}\u00ad{HF[12:]}", "a Hugging Face token", (1, 7)),
    (f"Modèle\u00a0: {full_width('hf_')}{HF[3:]}", "a Hugging Face token", (1, 10)),
    (f"token {full_width(GITHUB)}", "a GitHub token", (1, 7)),
    ("twine -p \u0440ypi-AgEIcHlwaS5vcmc" + TOKEN + TOKEN, "a PyPI token", (1, 10)),
    (f"key \u0455k-{OPENAI[3:]}", "an OpenAI API key", (1, 5)),
    (f"export GITHUB_TOKEN={GITHUB[:20]}\n    {GITHUB[20:]}", "a GitHub token", (1, 21)),
    (f"export GITHUB_TOKEN={GITHUB[:20]}\\\n{GITHUB[20:]}", "a GitHub token", (1, 21)),
    (f"token:\n  {OPENAI[:40]}\n  {OPENAI[40:]}", "an OpenAI API key", (2, 3)),
    (f"GET /runs?t={GITHUB.replace('_', '%5F')}&n=1", "a GitHub token", (1, 13)),
    ("GET /runs?t=" + "".join(f"%{ord(c):02X}" for c in HF), "a Hugging Face token", (1, 13)),
    (f"DB_PASSWORD\u00a0=\u00a0{PASSWORD}", "a secret value for DB_PASSWORD", (1, 15)),
    (f"api_key\u202f:\u202f{TOKEN}", "a secret value for api_key", (1, 11)),
])
def test_a_token_disguised_by_invisible_wide_look_alike_wrapped_or_escaped_characters_is_found_where_it_starts(
        body, what, place):
    assert find_sensitive(body) == [(what, *place)]


def der_lines(der_hex):
    """Base64 lines of 64 characters for DER that opens as given, then bytes of noise."""
    body = base64.b64encode(bytes.fromhex(der_hex) + bytes(RNG.randrange(256) for _ in range(300))).decode()
    return "\n".join(body[i:i + 64] for i in range(0, len(body), 64))


@pytest.mark.parametrize("der", [
    "308204bd020100300d06092a864886f70d0101010500048204a7",  # PKCS#8, RSA
    "3081870201003013",                                       # PKCS#8, EC
    "302e020100300506032b657004220420",                       # PKCS#8, Ed25519
    "30820505305706092a864886f70d01050d30",                   # PKCS#8, encrypted
    "308204a40201000282010100",                               # PKCS#1 RSA
    "30770201010420",                                         # SEC1 EC
    b"openssh-key-v1\0".hex(),
])
def test_a_private_key_pasted_without_its_header_is_found_on_its_first_line(der):
    body = f"The key, from the vault:\n\n{der_lines(der)}\n\nthen ssh in."
    assert find_sensitive(body) == [("a private key body", 3, 1)]


@pytest.mark.parametrize("der", [
    "308205a33082038ba003020102021400",                       # a certificate
    "30820122300d06092a864886f70d01010105000382010f00",       # an RSA public key
    "3059301306072a8648ce3d020106082a8648ce3d03010703420004",  # an EC public key
    "308202bc308201a4020100",                                 # a certificate request
    "89504e470d0a1a0a0000000d49484452",                       # a PNG image
])
def test_a_certificate_a_public_key_or_an_image_in_base64_is_not_refused(der):
    assert find_sensitive(f"-----BEGIN CERTIFICATE-----\n{der_lines(der)}\n-----END CERTIFICATE-----") == []
    assert find_sensitive(der_lines(der)) == []


@pytest.mark.parametrize("body", [
    "Résultat\u202f: 85,3\u00a0% sur GSM8K\u00a0; le modèle «\u00a0Qwen\u00a0» répond mieux.",
    "Модель решила 85 из 100 задач; ключевой вывод: оценщик отбрасывает единицы. Пароль не нужен.",
    "Το μοντέλο έλυσε 99/198 προβλήματα· α=0.1, β=0.9, κ=0.82, ρ = 0.93.",
    "模型在GSM8K上的准确率为85.3％（1319题中1125题正确）。注意：测试集已更新。密钥：无。",
    "ＧＳＭ８Ｋ：１１２５／１３１９（８５．３％），ｓｅｅｄ＝４２，ｍａｘ＿ｔｏｋｅｎｓ＝１０２４。",
    "Bench\u00admark re\u00adsults by the team \U0001F469\u200d\U0001F4BB \u2014 see the \ufb01gure\u00a0\u00bd.",
    "https://en.wikipedia.org/wiki/Caf%C3%A9 and https://www.google.com/search?q=gsm8k%20leaderboard%3A%20llama",
    f"https://auth.example.org/authorize?redirect_uri=https%3A%2F%2Fbenchmarks.wiki%2Fcb&state={TOKEN[:12]}",
    f"sha512:\n    {DIGEST}\n    {DIGEST}",
    f'EXPECTED = (\n    "{DIGEST}"\n    "{COMMIT}"\n)',
    f"Key: main--test--317ef6cc-69a8-59a3-a347-e37d3399eb10\n{COMMIT}",
])
def test_ordinary_text_that_folding_changes_is_not_refused(body):
    assert find_sensitive(body) == []


def test_lines_joined_again_do_not_run_a_value_under_a_name_into_the_next_line():
    # The first line ends in a run and the second is one, as in a wrapped token; the JSON web
    # token on the second line is named there, not as the value of Key.
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9." + TOKEN
    body = f"Key: main--test--317ef6cc-69a8-59a3-a347-e37d3399eb10\n{jwt}"
    assert find_sensitive(body) == [("a JSON web token", 2, 1)]


def test_a_token_wrapped_from_the_start_of_a_line_after_a_line_that_ends_in_a_long_word():
    body = f"Data: https://huggingface.co/datasets/openai/gsm8k\n{GITHUB[:24]}\n{GITHUB[24:]}"
    assert find_sensitive(body) == [("a GitHub token", 2, 1)]


def test_a_token_wrapped_after_its_first_sixteen_characters_on_a_line_of_their_own_is_found():
    body = f"Run with:\n{GITHUB[:16]}\n{GITHUB[16:]}"
    assert find_sensitive(body) == [("a GitHub token", 2, 1)]
