"""The scrubbing corpus: credentials of 40+ kinds in the text they hide in, and look-alikes.

`SEEDED` rows are (kind, secret value, text with `{v}` where the value goes); each text holds
exactly one secret. `LOOKALIKES` are texts full of high-entropy or secret-sounding strings
that are not credentials; they must come out byte-identical.
"""

from __future__ import annotations

import base64
import hashlib
import json
import string
import uuid

from tests.scrub import fakes as f
from tests.scrub.fakes import ALNUM, B64, HEX, LOWER_DIGITS, UPPER_DIGITS, URLSAFE, mixed, rand

SEEDED: list[tuple[str, str, str]] = [
    # cloud
    ("aws_access_key", "AKIA" + rand(UPPER_DIGITS, 16), "aws_access_key_id = {v}\nregion = eu-1"),
    ("aws_secret_key", mixed(B64, 40), 'AWS_SECRET = None\naws_secret_access_key = "{v}"'),
    ("env_secret", "aws_secret_access_key = " + mixed(B64, 40), "export AWS_SECRET='{v}'"),
    ("config_secret", mixed(B64, 120), "[default]\naws_session_token = {v}\n"),
    ("google_api_key", "AIza" + mixed(URLSAFE, 35), "https://maps.googleapis.com/api?key={v}&q=x"),
    ("google_oauth_secret", "GOCSPX-" + mixed(URLSAFE, 28), '{{"client_secret": "{v}"}}'),
    ("azure_client_secret", rand(ALNUM, 3) + "8Q~" + mixed(ALNUM, 34), "AZURE_CLIENT_SECRET={v}"),
    (
        "azure_storage_key",
        "AccountKey=" + f.b64(66),
        "DefaultEndpointsProtocol=https;AccountName=acme;{v};EndpointSuffix=core.windows.net",
    ),
    (
        "azure_sas_token",
        f.sas_signature(),
        "https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&sig={v}",
    ),
    ("alibaba_access_key", "LTAI" + mixed(ALNUM, 20), "ALIBABA_CLOUD_ACCESS_KEY_ID: {v}"),
    ("digitalocean_token", "dop_v1_" + rand(HEX, 64), "doctl auth init -t {v}"),
    ("vault_token", "hvs." + mixed(URLSAFE, 90), "vault login {v}"),
    ("terraform_token", rand(ALNUM, 14) + ".atlasv1." + mixed(URLSAFE, 67), 'token = "{v}"'),
    ("databricks_token", "dapi" + rand(HEX, 32), "databricks configure --host x; echo {v}"),
    ("pulumi_token", "pul-" + rand(HEX, 40), "pulumi login with {v}"),
    # version control
    (
        "github_token",
        "ghp_" + mixed(ALNUM, 36),
        "git clone https://github.com/acme/app (token {v})",
    ),
    ("github_token", "github_pat_" + mixed(ALNUM, 22) + "_" + mixed(ALNUM, 59), "GH={v}"),
    ("gitlab_token", "glpat-" + mixed(URLSAFE, 20), "curl --header 'PRIVATE-TOKEN: {v}' gitlab"),
    # chat
    (
        "slack_token",
        f"xoxb-{rand(string.digits, 12)}-{rand(string.digits, 13)}-{rand(LOWER_DIGITS, 24)}",
        "SLACK_BOT = '{v}'",
    ),
    (
        "slack_webhook",
        f"https://hooks.slack.com/services/T{rand(UPPER_DIGITS, 8)}/B{rand(UPPER_DIGITS, 8)}/"
        + rand(ALNUM, 24),
        "requests.post('{v}', json=payload)",
    ),
    ("discord_bot_token", f.discord_token(), "client.run({v})"),
    (
        "discord_webhook",
        f"https://discord.com/api/webhooks/{rand(string.digits, 18)}/{mixed(URLSAFE, 68)}",
        "curl -X POST {v} -d @msg.json",
    ),
    ("telegram_bot_token", f"{rand(string.digits, 9)}:{mixed(URLSAFE, 35)}", "bot = Bot({v})"),
    # payment
    ("stripe_key", "sk_live_" + mixed(ALNUM, 24), "stripe.api_key = {v}"),
    ("stripe_webhook_secret", "whsec_" + mixed(ALNUM, 32), "stripe listen # secret {v}"),
    ("square_oauth_secret", "sq0csp-" + mixed(URLSAFE, 43), "square oauth {v}"),
    ("square_access_token", "EAAA" + mixed(URLSAFE, 60), "client = Square({v})"),
    (
        "braintree_token",
        f"access_token$production${rand(LOWER_DIGITS, 16)}${rand(HEX, 32)}",
        "gateway = braintree.BraintreeGateway(access_token={v})",
    ),
    ("shopify_token", "shpat_" + rand(HEX, 32), "X-Shopify-Access: {v}"),
    # LLM providers
    ("openai_key", "sk-proj-" + mixed(URLSAFE, 64), "client = OpenAI(api_key={v})"),
    ("anthropic_key", "sk-ant-api03-" + mixed(URLSAFE, 93), "Using key {v} for claude"),
    ("huggingface_token", "hf_" + mixed(ALNUM, 34), "huggingface-cli login --token {v}"),
    ("groq_api_key", "gsk_" + mixed(ALNUM, 52), "Groq(api_key={v})"),
    ("xai_api_key", "xai-" + mixed(ALNUM, 80), "XAI key is {v}"),
    ("replicate_token", "r8_" + mixed(ALNUM, 37), "replicate.Client({v})"),
    ("perplexity_key", "pplx-" + mixed(ALNUM, 48), "perplexity {v}"),
    ("openrouter_key", "sk-or-v1-" + rand(HEX, 64), "base_url=openrouter, key {v}"),
    # package registries
    ("npm_token", "npm_" + mixed(ALNUM, 36), "publish with {v}"),
    ("pypi_token", "pypi-AgEIcHlwaS5vcmc" + mixed(URLSAFE, 80), "password: {v}\nuser: __token__"),
    ("dockerhub_token", "dckr_pat_" + mixed(URLSAFE, 27), "echo {v} | docker login -u me"),
    ("rubygems_key", "rubygems_" + rand(HEX, 48), "gem push x.gem # {v}"),
    ("artifactory_token", "AKCp" + mixed(ALNUM, 69), "jfrog rt c --access {v}"),
    ("docker_registry_auth", f.docker_auth(), '{{"auths": {{"ghcr.io": {{"auth": "{v}"}}}}}}'),
    # email and developer services
    ("sendgrid_key", f"SG.{mixed(URLSAFE, 22)}.{mixed(URLSAFE, 43)}", "SendGridAPIClient({v})"),
    ("mailgun_key", "key-" + rand(HEX, 32), "auth=('api', {v})"),
    ("mailchimp_key", rand(HEX, 32) + "-us12", "mailchimp.set_config({{'api_key': {v}}})"),
    ("brevo_key", f"xkeysib-{rand(HEX, 64)}-{mixed(ALNUM, 16)}", "brevo {v}"),
    ("twilio_key", "SK" + "1" + rand(HEX, 31), "TWILIO key={v}"),
    ("postman_api_key", f"PMAK-{rand(HEX, 24)}-{rand(HEX, 34)}", "postman {v}"),
    ("linear_api_key", "lin_api_" + mixed(ALNUM, 40), "linear {v}"),
    ("newrelic_key", "NRAK-" + "A1" + rand(UPPER_DIGITS, 25), "newrelic {v}"),
    # generic tokens and headers
    ("jwt", f.jwt(), "Cookie: session={v}; Path=/"),
    ("bearer_token", mixed(URLSAFE, 40), "-H 'Authorization: Bearer {v}'"),
    ("basic_auth_header", f.b64(18), "Authorization: Basic {v}"),
    ("api_key_header", mixed(ALNUM, 32), "curl -H 'x-api-key: {v}' https://api"),
    # database URLs and connection strings
    ("url_password", "Pg" + mixed(ALNUM, 14), "DATABASE_URL postgres://app:{v}@db.internal:5432/x"),
    ("url_password", "r3d1s" + rand(ALNUM, 10), "redis://default:{v}@cache:6379/0"),
    ("url_password", "n0user" + rand(ALNUM, 8), "REDIS_URL redis://:{v}@cache:6379"),
    ("url_password", mixed(ALNUM, 18), "mongodb+srv://admin:{v}@cluster0.x.mongodb.net/db"),
    ("url_password", "my" + mixed(ALNUM, 10), "mysql://root:{v}@127.0.0.1:3306/app"),
    (
        "connection_string_password",
        "P4ss" + rand(ALNUM, 8) + "!",
        "Server=tcp:db,1433;Database=app;User Id=sa;Password={v};",
    ),
    # private keys
    ("private_key", f.pem("RSA PRIVATE KEY"), "$ cat ~/.ssh/id_rsa\n{v}\n$ ls"),
    ("private_key", f.pem("OPENSSH PRIVATE KEY", 400), "{v}"),
    ("private_key", f.pem("EC PRIVATE KEY", 120), "ec.pem:\n{v}\n"),
    ("private_key", f.pem("PRIVATE KEY", 500), "key.pem\n{v}"),
    ("private_key", f.pem("ENCRYPTED PRIVATE KEY", 500), "{v}\nok"),
    ("private_key", f.encrypted_legacy_pem(), "legacy:\n{v}\nnext line: kept"),
    ("private_key", f.pgp_key(), "gpg --export-secret-keys -a\n{v}"),
    ("private_key", f.ssh2_key(), "{v}"),
    ("private_key", f.putty_key(), "id.ppk:\n{v}\n"),
    ("private_key", f.truncated_pem(), "$ head -4 id\n{v}\n$ echo done"),
    (
        "private_key",
        f.service_account_json(),
        '{{"type": "service_account", "private_key": "{v}"}}',
    ),
    # env, YAML, code, config and command-line forms
    ("env_secret", "django-insecure-" + mixed(ALNUM, 30), "DEBUG=1\nDJANGO_SECRET_KEY={v}\nDB=x"),
    ("env_secret", "hunter2" + rand(ALNUM, 5), "export DB_PASSWORD='{v}'"),
    ("env_secret", "s3cr" + rand(ALNUM, 6), "DB_HOST=db\nDB_PASS={v}\n"),
    ("env_secret", str(uuid.UUID(int=f.RNG.getrandbits(128))), "HEROKU_API_KEY={v}"),
    ("env_secret", "pg" + rand(ALNUM, 8), "PGPASSWORD={v} psql -h db -U app"),
    (
        "yaml_secret",
        "Xk9" + rand(ALNUM, 9),
        "services:\n  db:\n    environment:\n      MYSQL_ROOT_PASSWORD: {v}\n",
    ),
    ("yaml_secret", mixed(ALNUM, 24), "slack:\n  api_token: {v}  # rotated\n"),
    ("assigned_secret", "Tr0ub4dor" + rand(ALNUM, 6), 'settings = {{"db_password": "{v}"}}'),
    ("assigned_secret", "pw" + rand(ALNUM, 6), "db_pass='{v}'"),
    ("high_entropy_secret", rand(URLSAFE, 40), 'client_secret_value = "{v}"'),
    ("cli_password", "hunter" + rand(ALNUM, 6), "mysql --user app --password {v} app"),
    ("cli_password", "c0rrect" + rand(ALNUM, 5), "mysql -u root -p'{v}' app"),
    ("cli_password", "r00t" + rand(ALNUM, 4), "mysql -uroot -p{v} -e 'show databases'"),
    ("cli_password", "ssh" + rand(ALNUM, 8), "sshpass -p {v} ssh deploy@host"),
    ("cli_password", mixed(ALNUM, 32), "tool --api-key={v} run"),
    ("netrc_password", "n3trc" + rand(ALNUM, 8), "machine api.example.com login bob password {v}"),
]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _sri(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def _uuid4_hex() -> str:
    return uuid.UUID(int=f.RNG.getrandbits(128), version=4).hex


def _uuid() -> str:
    return str(uuid.UUID(int=f.RNG.getrandbits(128)))


SHA1 = hashlib.sha1(b"commit").hexdigest()
LOOKALIKES: list[str] = [
    # git log and git SHAs in prose
    f"commit {SHA1}\nAuthor: Jane Roe <jane@example.org>\n\n    Fix token parsing (#123)\n\n"
    f"commit {hashlib.sha1(b'x').hexdigest()}\nMerge: 1a2b3c4 5d6e7f8\n",
    f"$ git rev-parse HEAD\n{SHA1}\nHEAD is now at {SHA1[:7]} Fix password reset\n"
    f"https://github.com/acme/app/commit/{SHA1}\n",
    # a diff touching credential handling code
    "diff --git a/app/auth.py b/app/auth.py\nindex 83db48f..bf269f4 100644\n--- a/app/auth.py\n"
    "+++ b/app/auth.py\n@@ -10,7 +10,7 @@ def login(user):\n-    password = getpass()\n"
    "+    password = getpass.getpass('Password: ')\n     token = tokens[i]\n"
    '     api_key=None\n     key = os.environ["API_KEY"]\n',
    # os.environ and other references
    "import os\n\nAPI_KEY = os.environ.get('OPENAI_API_KEY')\n"
    'SECRET_KEY = os.getenv("SECRET_KEY")\ntoken = os.environ["GITHUB_TOKEN"]\n'
    "def connect(password: str | None = None, token: str = '') -> None:\n"
    "    headers = {'Authorization': f'Bearer {token}'}\n    password = password or getpass()\n"
    "    self.api_key = api_key\n    max_tokens = 4096\n    token_type = 'bearer'\n"
    "    access_key = config['aws']['access_key']\n    TOKENIZERS_PARALLELISM=false\n",
    "env:\n  OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}\n  password: ${DB_PASSWORD}\n"
    'export GITHUB_TOKEN=$(gh auth token)\nDB_PASSWORD="${DB_PASSWORD:-}"\n'
    "const key = process.env.STRIPE_SECRET_KEY;\n",
    # type annotations and schemas that name secrets
    "class Settings(BaseModel):\n    password: SecretStr\n    api_key: Optional[str] = None\n"
    "    token: str | None = None\n    password: str\n"
    "interface Login {\n  password: string;\n}\npassword:\n  type: string\n  format: password\n",
    # names that contain a secret word but hold ordinary values
    'tokenizer_name = "Llama-2-7b-hf"\nmodel_tokens = "gpt2-medium-v2"\n'
    "PASSWORD_HASHERS=django.contrib.auth.hashers.PBKDF2PasswordHasher\n"
    "GITHUB_TOKEN_URL=https://api.github.com/app/installations/12/access_tokens\n"
    "The API uses Bearer authentication-with-opaque-tokens in the header.\n",
    # tokenizer names
    'tok = AutoTokenizer.from_pretrained("meta-llama/Llama-3.1-8B-Instruct")\n'
    'enc = tiktoken.get_encoding("cl100k_base")\ntokenizer: Qwen/Qwen2.5-Coder-7B-Instruct\n'
    '{"tokenizer_class": "LlamaTokenizerFast", "max_token_length": 4096}\n'
    "python train.py --tokenizer gpt2 --max-tokens 2048\n",
    # names with a keyword inside, from library code
    'DUMMY_DIFF_TOKENIZER_IDENTIFIER = "julien-c/dummy-diff-tokenizer"\n'
    '{"token_classification_class": "ForTokenClassification",'
    ' "wavtokenizer_encoder": "WavTokenizerEncoderConfig"}\n'
    "_, host, port, access_key, secret_key = s3_example_simple\n",
    # elided examples and help text
    "hf spaces secrets add me/space -s OPENAI_API_KEY=sk-... -s ANTHROPIC_API_KEY=sk-...\n"
    "`--secrets SECRET=value`\n--container-registry-password requires --container-registry\n"
    "provided via the --username and --password options\n",
    # settings an agent writes for a test run (SWE-agent runs of SWE-bench Django tasks)
    "settings.configure(\n    DEBUG=True,\n    SECRET_KEY='test-secret-key',\n"
    "    DATABASES={'default': {'NAME': 'test_db', 'PASSWORD': 'test_password'}},\n)\n"
    "SECRET_KEY='fake-key'\nSECRET_KEY = 'dummy-key'\nexport SECRET_KEY=dummy\n"
    "SECRET_KEY='test-key-for-validation-testing'\n",
    # pip's build directories: `<project>_<uuid4 hex>`
    f'  File "/tmp/pip-install-251na75k/mysqlclient_{_uuid4_hex()}/setup.py", line 15\n',
    # .env template with placeholders and references
    "DATABASE_URL=postgres://user:${DB_PASSWORD}@localhost/app\nSECRET_KEY=changeme\n"
    "API_TOKEN=$API_TOKEN\nPASSWORD=\nMAX_TOKENS=4096\nAUTH_TYPE=oauth2\nPWD=/home/app\n",
    # command lines and help text that are not passwords
    "docker run -p 8080:80 nginx\nssh -p 2222 deploy@host\nmysql -u root -p mydb\n"
    'read -s -p "Password: " PW\necho "$PW" | docker login --password-stdin ghcr.io\n'
    "  --password PASSWORD   the database password\n  --token TEXT  API token\n",
    # pip freeze and hashes in requirements
    "attrs==23.2.0\ncertifi==2024.2.2\ncryptography==42.0.5\ntokenizers==0.19.1\n"
    f"requests==2.31.0 --hash=sha256:{_sha('r')}\n",
    # sha256sum output
    f"{_sha('a')}  dist/app-1.0.tar.gz\n{_sha('b')}  dist/app-1.0-py3-none-any.whl\n",
    # npm package-lock.json integrity entries
    json.dumps(
        {
            "node_modules/left-pad": {
                "version": "1.3.0",
                "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",
                "integrity": _sri(b"left-pad"),
            }
        },
        indent=2,
    ),
    # yarn.lock
    f'left-pad@^1.3.0:\n  version "1.3.0"\n  resolved "https://registry.yarnpkg.com/left-pad/-/'
    f'left-pad-1.3.0.tgz#{hashlib.sha1(b"lp").hexdigest()}"\n  integrity {_sri(b"y")}\n',
    # Cargo.lock and poetry.lock checksums
    f'[[package]]\nname = "serde"\nversion = "1.0.197"\nchecksum = "{_sha("serde")}"\n\n'
    f'files = [\n    {{file = "x-1.0.whl", hash = "sha256:{_sha("whl")}"}},\n]\n',
    # go.sum
    f"golang.org/x/text v0.14.0 h1:{base64.b64encode(hashlib.sha256(b'g').digest()).decode()}\n",
    # docker digests
    f"docker pull python@sha256:{_sha('py')}\n"
    f"REPOSITORY   TAG   DIGEST\npython       3.12  sha256:{_sha('d')}\n"
    f'"Id": "sha256:{_sha("id")}",\n',
    # hashes, ids and digests in JSON, including under secret-sounding names
    json.dumps(
        {
            "id": _uuid(),
            "sha": _sha("c"),
            "git_sha": SHA1,
            "md5": hashlib.md5(b"x").hexdigest(),
            "token_count": 1234,
            "password_hint": None,
            "session_token_sha1": hashlib.sha1(b"s").hexdigest(),
            "api_key_id": _uuid(),
            "secret_digest": "sha256:" + _sha("sd"),
        },
        indent=2,
    ),
    # UUIDs and base64 fixtures (random bytes, an image)
    "\n".join(_uuid() for _ in range(5))
    + f'\nFIXTURE = base64.b64decode("{f.b64(300)}")\n'
    + "ICON = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAC"
    "hwGA60e6kgAAAABJRU5ErkJggg=='\n" + f'<img src="data:image/png;base64,{f.b64(120)}">\n',
    # public keys and certificates
    f"-----BEGIN CERTIFICATE-----\n{f.pem_lines(300)}\n-----END CERTIFICATE-----\n"
    f"-----BEGIN PUBLIC KEY-----\n{f.pem_lines(270)}\n-----END PUBLIC KEY-----\n"
    f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rand(B64, 43)} jane@laptop\n",
    # cloud ids that are not secrets
    "arn:aws:iam::123456789012:role/deploy\nami-0abcdef1234567890\nsg-0123456789abcdef0\n"
    "Resource: projects/my-project-123/secrets/db-password/versions/3\n",
    # URLs without credentials
    "https://github.com/django/django/blob/main/django/db/models/query.py#L1234\n"
    "git@github.com:acme/app.git\nssh://git@github.com/acme/app.git\nhttps://user@host/x\n",
    # logs and test output about passwords and tokens
    "tests/test_auth.py::test_token_refresh PASSED [ 50%]\n"
    "tests/test_auth.py::test_password_reset FAILED [100%]\n"
    'E   AssertionError: assert "sk-test" == "sk-live"\nPassword: ********\n'
    "Enter passphrase for key '/root/.ssh/id_rsa':\n"
    'FATAL:  password authentication failed for user "postgres"\n'
    'Traceback (most recent call last):\n  File "/usr/lib/python3.11/secrets.py", line 42\n',
]
