"""The secrets benchmark: credential kinds built from each vendor's documented token format,
and look-alikes that must survive scrubbing untouched.

Written before the rules of issue 29 (families, context rules, vendor rules), and fixed then:
each kind's value is generated from the documented shape (prefix, alphabet, length), with a
seeded RNG, and placed in the kind of text it leaks through in an agent's trajectory (a
command, a header, a config line, a log). `source` says where the shape is documented: the
vendor's page, or the rule of a well-kept ruleset (gitleaks `config/gitleaks.toml`, by rule
id; detect-secrets plugins) that encodes it. No value here is a real credential.

About a third of the kinds are held out by a hash of their name (`split_of`), fixed with the
corpus: the rules were tuned on the `design` kinds only; `benchmarks/bench_secrets.py`
reports both splits.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
from dataclasses import dataclass
from typing import Any

RNG = random.Random(29_2026)
UP = string.ascii_uppercase
LOW = string.ascii_lowercase
DIG = string.digits
HEX = "0123456789abcdef"
B62 = UP + LOW + DIG
URL = B62 + "-_"
B64 = B62 + "+/"
B32 = LOW + "234567"
GL = "gitleaks config/gitleaks.toml rule "


def r(chars: str, n: int) -> str:
    return "".join(RNG.choice(chars) for _ in range(n))


def m(chars: str, n: int) -> str:
    """Random, with upper, lower and a digit at random places (as real keys have)."""
    body = list(r(chars, n))
    for pool in (UP, LOW, DIG):
        if pool[0] in chars or any(c in chars for c in pool):
            body[RNG.randrange(n)] = RNG.choice([c for c in pool if c in chars])
    return "".join(body)


def b64(n_bytes: int) -> str:
    return base64.b64encode(RNG.randbytes(n_bytes)).decode()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def uuid4() -> str:
    h = r(HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def jwt_body(claims: dict[str, object]) -> str:
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    return f"{head}.{b64url(json.dumps(claims).encode())}.{b64url(RNG.randbytes(32))}"


@dataclass(frozen=True)
class Kind:
    name: str
    value: str
    template: str  # `{v}` is where the value goes
    source: str

    @property
    def text(self) -> str:
        return self.template.replace("{v}", self.value)


def split_of(name: str) -> str:
    """`heldout` for about a third of the kinds, by a hash fixed with the corpus."""
    return "heldout" if hashlib.sha256(name.encode()).digest()[0] % 3 == 0 else "design"


K = Kind
KINDS: list[Kind] = [
    # --- LLM and ML providers
    K(
        "openai_project_key",
        "sk-proj-" + m(URL, 156),
        "export OPENAI_API_KEY={v}",
        "platform.openai.com/docs/api-reference/authentication; " + GL + "openai-api-key",
    ),
    K(
        "openai_legacy_key",
        "sk-" + m(B62, 20) + "T3BlbkFJ" + m(B62, 20),
        "client = OpenAI(api_key='{v}')",
        GL + "openai-api-key (T3BlbkFJ marker)",
    ),
    K(
        "openai_admin_key",
        "sk-admin-" + m(URL, 64),
        "curl https://api.openai.com/v1/organization/users -H 'Authorization: Bearer {v}'",
        "platform.openai.com/docs/api-reference/administration",
    ),
    K(
        "openai_service_account_key",
        "sk-svcacct-" + m(URL, 120),
        "OPENAI_KEY={v}",
        "platform.openai.com/docs/api-reference/project-service-accounts",
    ),
    K(
        "anthropic_api_key",
        "sk-ant-api03-" + m(URL, 93) + "AA",
        "ANTHROPIC_API_KEY={v} claude",
        GL + "anthropic-api-key",
    ),
    K(
        "anthropic_admin_key",
        "sk-ant-admin01-" + m(URL, 93) + "AA",
        "x-api-key: {v}",
        GL + "anthropic-admin-api-key",
    ),
    K(
        "groq_key",
        "gsk_" + m(B62, 52),
        'Groq(api_key="{v}")',
        "console.groq.com/keys (gsk_ prefix)",
    ),
    K("xai_key", "xai-" + m(B62, 80), "XAI key is {v}", "docs.x.ai/docs (xai- prefix)"),
    K(
        "replicate_token",
        "r8_" + m(B62, 37),
        "replicate.Client({v})",
        "replicate.com/docs/reference/http#authentication (r8_)",
    ),
    K("perplexity_key", "pplx-" + m(B62, 48), "pplx {v}", GL + "perplexity-api-key"),
    K("openrouter_key", "sk-or-v1-" + r(HEX, 64), "key {v}", "openrouter.ai/docs/api-keys"),
    K(
        "huggingface_token",
        "hf_" + m(UP + LOW, 34),
        "huggingface-cli login --token {v}",
        GL + "huggingface-access-token",
    ),
    K(
        "huggingface_org_token",
        "api_org_" + m(UP + LOW, 34),
        "HF org token: {v}",
        GL + "huggingface-organization-api-token",
    ),
    K(
        "langsmith_key",
        "lsv2_pt_" + r(HEX, 32) + "_" + r(HEX, 10),
        "LANGCHAIN_API_KEY={v}",
        "docs.smith.langchain.com/administration/how_to_guides/organization_management/"
        "create_account_api_key (lsv2_pt_/lsv2_sk_)",
    ),
    K(
        "pinecone_key",
        "pcsk_" + m(B62, 5) + "_" + m(B62, 60),
        'Pinecone(api_key="{v}")',
        "docs.pinecone.io/guides/projects/manage-api-keys (pcsk_)",
    ),
    K("fireworks_key", "fw_" + m(B62, 24), "fireworks key {v}", "docs.fireworks.ai (fw_ keys)"),
    K("cohere_key", m(B62, 40), "CO_API_KEY={v}", GL + "cohere-api-token"),
    K("mistral_key", m(B62, 32), "export MISTRAL_API_KEY='{v}'", "docs.mistral.ai (32 chars)"),
    K("together_key", r(HEX, 64), "TOGETHER_API_KEY={v}", "docs.together.ai (64 hex)"),
    K("wandb_key", r(HEX, 40), "wandb login {v}", "docs.wandb.ai/ref/cli/wandb-login (40 hex)"),
    # --- cloud
    K(
        "aws_access_key_id",
        "AKIA" + r("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
        "aws_access_key_id = {v}",
        GL + "aws-access-token",
    ),
    K(
        "aws_sts_key_id",
        "ASIA" + r("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
        "AccessKeyId: {v}",
        GL + "aws-access-token (ASIA)",
    ),
    K(
        "aws_secret_key",
        m(B64, 40),
        "aws_secret_access_key = {v}",
        "docs.aws.amazon.com/IAM/latest/UserGuide/id_credentials_access-keys.html",
    ),
    K(
        "aws_session_token",
        "IQoJb3JpZ2luX2VjE" + m(B64, 300),
        "aws_session_token = {v}",
        "docs.aws.amazon.com/IAM/latest/UserGuide/id_credentials_temp_use-resources.html",
    ),
    K(
        "aws_bedrock_key",
        "ABSK" + b64(120),
        "AWS_BEARER_TOKEN_BEDROCK={v}",
        GL + "aws-amazon-bedrock-api-key-long-lived",
    ),
    K(
        "gcp_api_key",
        "AIza" + m(URL, 35),
        "https://maps.googleapis.com/maps/api/geocode/json?key={v}",
        GL + "gcp-api-key",
    ),
    K(
        "google_oauth_client_secret",
        "GOCSPX-" + m(URL, 28),
        '"client_secret": "{v}"',
        "developers.google.com/identity/protocols/oauth2 (GOCSPX-)",
    ),
    K(
        "google_oauth_access_token",
        "ya29." + m(URL, 150),
        'curl -H "Authorization: Bearer {v}" https://www.googleapis.com/drive/v3/files',
        "developers.google.com/identity/protocols/oauth2 (ya29. access tokens)",
    ),
    K(
        "google_oauth_refresh_token",
        "1//0" + m(URL, 99),
        '"refresh_token": "{v}"',
        "developers.google.com/identity/protocols/oauth2 (1// refresh tokens)",
    ),
    K(
        "azure_ad_client_secret",
        r(B62, 3) + "8Q~" + m(B62 + "_~.", 34),
        "AZURE_CLIENT_SECRET={v}",
        GL + "azure-ad-client-secret",
    ),
    K(
        "azure_storage_key",
        b64(64),
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={v};"
        "EndpointSuffix=core.windows.net",
        "learn.microsoft.com/azure/storage/common/storage-configure-connection-string",
    ),
    K(
        "azure_sas_signature",
        b64(32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D"),
        "https://acme.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig={v}",
        "learn.microsoft.com/rest/api/storageservices/create-service-sas",
    ),
    K(
        "azure_devops_pat",
        r(B32, 52),
        "AZURE_DEVOPS_EXT_PAT={v}",
        "learn.microsoft.com/azure/devops/organizations/accounts/use-personal-access-tokens",
    ),
    K(
        "alibaba_access_key",
        "LTAI" + m(B62, 20),
        "ALIBABA_CLOUD_ACCESS_KEY_ID: {v}",
        GL + "alibaba-access-key-id",
    ),
    K(
        "digitalocean_pat",
        "dop_v1_" + r(HEX, 64),
        "doctl auth init -t {v}",
        GL + "digitalocean-pat",
    ),
    K("digitalocean_oauth", "doo_v1_" + r(HEX, 64), "token {v}", GL + "digitalocean-access-token"),
    K(
        "digitalocean_refresh",
        "dor_v1_" + r(HEX, 64),
        "refresh {v}",
        GL + "digitalocean-refresh-token",
    ),
    K(
        "ibm_cloud_key",
        m(URL, 44),
        "ibmcloud login --apikey {v}",
        "cloud.ibm.com/docs/account?topic=account-userapikey (44 chars)",
    ),
    K("cloudflare_api_token", m(URL, 40), "CLOUDFLARE_API_TOKEN={v}", GL + "cloudflare-api-key"),
    K(
        "cloudflare_global_key",
        r(HEX, 37),
        "curl -H 'X-Auth-Email: ops@acme.io' -H 'X-Auth-Key: {v}' "
        "https://api.cloudflare.com/client/v4/zones",
        GL + "cloudflare-global-api-key",
    ),
    K(
        "cloudflare_origin_ca_key",
        "v1.0-" + r(HEX, 24) + "-" + r(HEX, 146),
        "origin_ca_key = {v}",
        GL + "cloudflare-origin-ca-key",
    ),
    K(
        "heroku_key_v2",
        "HRKU-AA" + m(URL, 58),
        "heroku auth:token => {v}",
        GL + "heroku-api-key-v2",
    ),
    K("heroku_key", uuid4(), "HEROKU_API_KEY={v}", GL + "heroku-api-key"),
    K("flyio_token", "fo1_" + m(URL, 43), "fly auth token: {v}", GL + "flyio-access-token"),
    K("flyio_macaroon", "FlyV1 fm2_" + b64(120), "FLY_API_TOKEN='{v}'", GL + "flyio-access-token"),
    K(
        "netlify_token",
        "nfp_" + m(B62, 36),
        "netlify deploy --auth {v}",
        "docs.netlify.com/api/get-started (nfp_ personal access tokens)",
    ),
    K(
        "supabase_token",
        "sbp_" + r(HEX, 40),
        "supabase login --token {v}",
        "supabase.com/docs/reference/cli/supabase-login (sbp_)",
    ),
    K(
        "doppler_personal",
        "dp.pt." + m(B62, 43),
        "doppler configure set token {v}",
        GL + "doppler-api-token",
    ),
    K(
        "doppler_service",
        "dp.st.prd." + m(B62, 40),
        "DOPPLER_TOKEN={v}",
        "docs.doppler.com/docs/service-tokens (dp.st.)",
    ),
    K("vault_service_token", "hvs." + m(URL, 90), "vault login {v}", GL + "vault-service-token"),
    K("vault_batch_token", "hvb." + m(URL, 138), "X-Vault-Token: {v}", GL + "vault-batch-token"),
    K(
        "terraform_token",
        m(B62, 14) + ".atlasv1." + m(URL, 67),
        'credentials "app.terraform.io" { token = "{v}" }',
        GL + "hashicorp-tf-api-token",
    ),
    K("pulumi_token", "pul-" + r(HEX, 40), "pulumi login with {v}", GL + "pulumi-api-token"),
    K(
        "databricks_token",
        "dapi" + r(HEX, 32),
        "databricks configure --token {v}",
        GL + "databricks-api-token",
    ),
    K(
        "planetscale_token",
        "pscale_tkn_" + m(URL, 43),
        "PLANETSCALE_SERVICE_TOKEN={v}",
        GL + "planetscale-api-token",
    ),
    K(
        "planetscale_password",
        "pscale_pw_" + m(URL, 43),
        "mysql -u x -p{v}",
        GL + "planetscale-password",
    ),
    K(
        "planetscale_oauth",
        "pscale_oauth_" + m(URL, 43),
        "oauth {v}",
        GL + "planetscale-oauth-token",
    ),
    K(
        "clickhouse_key",
        "4b1d" + m(B62, 38),
        "clickhouse secret {v}",
        GL + "clickhouse-cloud-api-secret-key",
    ),
    K(
        "dynatrace_token",
        "dt0c01." + m(UP + DIG, 24) + "." + m(UP + DIG, 64),
        "Api-Token {v}",
        GL + "dynatrace-api-token",
    ),
    K(
        "newrelic_user_key",
        "NRAK-" + m(UP + DIG, 27),
        "newrelic {v}",
        GL + "new-relic-user-api-key",
    ),
    K("newrelic_insert_key", "NRII-" + m(URL, 32), "insert key {v}", GL + "new-relic-insert-key"),
    K(
        "newrelic_browser_key",
        "NRJS-" + r(HEX, 19),
        "browser {v}",
        GL + "new-relic-browser-api-token",
    ),
    K("datadog_api_key", r(HEX, 32), "DD_API_KEY={v}", GL + "datadog-access-token"),
    K(
        "sentry_org_token",
        "sntrys_"
        + b64url(json.dumps({"iat": 1, "url": "https://sentry.io", "org": "acme"}).encode())
        + "_"
        + m(B62, 43),
        "SENTRY_AUTH_TOKEN={v}",
        GL + "sentry-org-token",
    ),
    K(
        "sentry_user_token",
        "sntryu_" + r(HEX, 64),
        "sentry-cli --auth-token {v}",
        GL + "sentry-user-token",
    ),
    K(
        "grafana_service_account",
        "glsa_" + m(B62, 32) + "_" + r(HEX, 8),
        "GRAFANA_TOKEN={v}",
        GL + "grafana-service-account-token",
    ),
    K(
        "grafana_cloud_token",
        "glc_" + b64(60).rstrip("="),
        "grafana cloud {v}",
        GL + "grafana-cloud-api-token",
    ),
    K(
        "grafana_legacy_key",
        "eyJrIjoi" + m(B62, 72),
        "Authorization: Bearer {v}",
        GL + "grafana-api-key",
    ),
    K(
        "onepassword_service_account",
        "ops_eyJ" + m(B64, 300),
        "OP_SERVICE_ACCOUNT_TOKEN={v}",
        GL + "1password-service-account-token",
    ),
    K(
        "onepassword_secret_key",
        "A3-"
        + r(UP + DIG, 6)
        + "-"
        + r(UP + DIG, 11)
        + "-"
        + r(UP + DIG, 5)
        + "-"
        + r(UP + DIG, 5)
        + "-"
        + r(UP + DIG, 5),
        "secret key {v}",
        GL + "1password-secret-key",
    ),
    K(
        "age_secret_key",
        "AGE-SECRET-KEY-1" + r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
        "# created: 2026\n{v}",
        GL + "age-secret-key",
    ),
    K(
        "infracost_token",
        "ico-" + m(B62, 32),
        "infracost configure set api_key {v}",
        GL + "infracost-api-token",
    ),
    K("prefect_token", "pnu_" + m(B62, 36), "prefect cloud login -k {v}", GL + "prefect-api-token"),
    K("readme_token", "rdme_" + r(LOW + DIG, 70), "README_API_KEY {v}", GL + "readme-api-token"),
    K(
        "scalingo_token",
        "tk-us-" + m(URL, 48),
        "scalingo login --api-token {v}",
        GL + "scalingo-api-token",
    ),
    # --- developer platforms and registries
    K(
        "github_pat",
        "ghp_" + m(B62, 36),
        "git remote set-url origin https://github.com/a/b # {v}",
        GL + "github-pat",
    ),
    K("github_oauth", "gho_" + m(B62, 36), "oauth {v}", GL + "github-oauth"),
    K("github_app_user", "ghu_" + m(B62, 36), "GH_TOKEN={v}", GL + "github-app-token"),
    K("github_app_server", "ghs_" + m(B62, 36), "token: {v}", GL + "github-app-token"),
    K("github_refresh", "ghr_" + m(B62, 76), "refresh {v}", GL + "github-refresh-token"),
    K(
        "github_fine_grained",
        "github_pat_" + m(B62, 22) + "_" + m(B62, 59),
        "GH={v}",
        GL + "github-fine-grained-pat",
    ),
    K(
        "gitlab_pat",
        "glpat-" + m(URL, 20),
        "curl --header 'PRIVATE-TOKEN: {v}' gitlab",
        GL + "gitlab-pat",
    ),
    K("gitlab_deploy", "gldt-" + m(URL, 20), "deploy {v}", GL + "gitlab-deploy-token"),
    K(
        "gitlab_runner",
        "glrt-" + m(URL, 20),
        "gitlab-runner register --token {v}",
        GL + "gitlab-runner-authentication-token",
    ),
    K("gitlab_trigger", "glptt-" + r(HEX, 40), "curl -F token={v} -F ref=main", GL + "gitlab-ptt"),
    K(
        "gitlab_cicd_job",
        "glcbt-" + m(B62, 5) + "_" + m(URL, 20),
        "CI_JOB_TOKEN={v}",
        GL + "gitlab-cicd-job-token",
    ),
    K("gitlab_feed", "glft-" + m(URL, 20), "feed {v}", GL + "gitlab-feed-token"),
    K("gitlab_oauth_secret", "gloas-" + m(URL, 64), "secret {v}", GL + "gitlab-oauth-app-secret"),
    K("gitlab_scim", "glsoat-" + m(URL, 20), "scim {v}", GL + "gitlab-scim-token"),
    K("gitlab_agent", "glagent-" + m(URL, 50), "agent {v}", GL + "gitlab-kubernetes-agent-token"),
    K(
        "gitlab_runner_registration",
        "GR1348941" + m(URL, 20),
        "registration {v}",
        GL + "gitlab-rrt",
    ),
    K(
        "bitbucket_app_password",
        "ATBB" + m(B62, 32),
        "bitbucket password {v}",
        "support.atlassian.com/bitbucket-cloud/docs/app-passwords (ATBB)",
    ),
    K(
        "atlassian_api_token",
        "ATATT3xFfGF0" + m(URL, 180) + "=" + r(HEX.upper(), 8),
        "JIRA_API_TOKEN={v}",
        GL + "atlassian-api-token (ATATT3)",
    ),
    K(
        "npm_token",
        "npm_" + m(B62, 36),
        "//registry.npmjs.org/:_authToken={v}",
        GL + "npm-access-token",
    ),
    K(
        "pypi_token",
        "pypi-AgEIcHlwaS5vcmc" + m(URL, 120),
        "password = {v}",
        GL + "pypi-upload-token",
    ),
    K("rubygems_key", "rubygems_" + r(HEX, 48), "GEM_HOST_API_KEY: {v}", GL + "rubygems-api-token"),
    K(
        "dockerhub_pat",
        "dckr_pat_" + m(URL, 27),
        "echo {v} | docker login -u me --password-stdin",
        "docs.docker.com/security/for-developers/access-tokens (dckr_pat_)",
    ),
    K(
        "nuget_key",
        "oy2" + r(LOW + DIG, 43),
        "dotnet nuget push x.nupkg --api-key {v}",
        "learn.microsoft.com/nuget/nuget-org/scoped-api-keys (oy2)",
    ),
    K("clojars_token", "CLOJARS_" + r(LOW + DIG, 60), "deploy {v}", GL + "clojars-api-token"),
    K(
        "artifactory_key",
        "AKCp" + m(B62, 69),
        "jfrog rt c --apikey {v}",
        GL + "artifactory-api-key",
    ),
    K(
        "artifactory_reference",
        "cmVmd" + m(B62, 59),
        "JFROG_TOKEN={v}",
        GL + "artifactory-reference-token",
    ),
    K(
        "sonarqube_token",
        "sqp_" + r(HEX, 40),
        "sonar-scanner -Dsonar.token={v}",
        "docs.sonarsource.com/sonarqube/latest/user-guide/user-account/generating-and-using-tokens",
    ),
    K(
        "circleci_pat",
        "CCIPAT_" + m(B62, 22) + "_" + r(HEX, 40),
        "circle-token: {v}",
        "circleci.com/docs/managing-api-tokens (CCIPAT_)",
    ),
    K(
        "buildkite_token",
        "bkua_" + r(HEX, 40),
        "BUILDKITE_API_TOKEN={v}",
        "buildkite.com/docs/apis/managing-api-tokens (bkua_)",
    ),
    K(
        "sourcegraph_token",
        "sgp_" + r(HEX, 16) + "_" + r(HEX, 40),
        "src login --token {v}",
        GL + "sourcegraph-access-token",
    ),
    K(
        "harness_pat",
        "pat." + m(URL, 22) + "." + m(B62, 24) + "." + m(B62, 20),
        "x-api-key: {v}",
        GL + "harness-api-key",
    ),
    K(
        "postman_key",
        "PMAK-" + r(HEX, 24) + "-" + r(HEX, 34),
        "postman {v}",
        GL + "postman-api-token",
    ),
    K("linear_key", "lin_api_" + m(B62, 40), "linear {v}", GL + "linear-api-key"),
    K(
        "notion_token",
        "ntn_" + r(DIG, 11) + m(B62, 35),
        "NOTION_TOKEN={v}",
        "developers.notion.com/docs/authorization (ntn_ internal integration tokens)",
    ),
    K(
        "notion_legacy_secret",
        "secret_" + m(B62, 43),
        'notion = Client(auth="{v}")',
        GL + "notion-api-token",
    ),
    K(
        "airtable_pat",
        "pat" + m(B62, 14) + "." + r(HEX, 64),
        "AIRTABLE_TOKEN={v}",
        GL + "airtable-personnal-access-token",
    ),
    K(
        "asana_pat",
        "2/" + r(DIG, 16) + "/" + r(DIG, 16) + ":" + r(HEX, 32),
        "asana {v}",
        "developers.asana.com/docs/personal-access-token",
    ),
    K(
        "typeform_token",
        "tfp_" + m(URL, 44) + "_" + m(B62, 14),
        "typeform {v}",
        GL + "typeform-api-token",
    ),
    K(
        "contentful_pat",
        "CFPAT-" + m(URL, 43),
        "contentful login --management-token {v}",
        "contentful.com/developers/docs/references/authentication (CFPAT-)",
    ),
    K("frameio_token", "fio-u-" + m(URL, 64), "frame.io {v}", GL + "frameio-api-token"),
    K(
        "hubspot_private_app",
        "pat-na1-" + uuid4(),
        "hubspot {v}",
        "developers.hubspot.com/docs/api/private-apps (pat-na1-)",
    ),
    K(
        "mapbox_secret",
        "sk.eyJ1Ijoi" + m(B62, 50) + "." + m(URL, 22),
        "MAPBOX_DOWNLOADS_TOKEN={v}",
        "docs.mapbox.com/accounts/guides/tokens (sk. secret tokens)",
    ),
    K("launchdarkly_key", "api-" + uuid4(), "LD_API_KEY={v}", GL + "launchdarkly-access-token"),
    K("algolia_admin_key", r(HEX, 32), "ALGOLIA_ADMIN_KEY={v}", GL + "algolia-api-key"),
    K("snyk_token", uuid4(), "snyk auth {v}", "docs.snyk.io/snyk-cli/handlers/auth"),
    # --- payment and commerce
    K(
        "stripe_secret",
        "sk_live_" + m(B62, 99),
        'stripe.api_key = "{v}"',
        GL + "stripe-access-token",
    ),
    K("stripe_restricted", "rk_live_" + m(B62, 99), "STRIPE_KEY={v}", GL + "stripe-access-token"),
    K(
        "stripe_webhook",
        "whsec_" + m(B62, 32),
        "stripe listen # {v}",
        "docs.stripe.com/webhooks (whsec_)",
    ),
    K(
        "square_access_token",
        "EAAA" + m(URL, 60),
        "client = Square({v})",
        GL + "square-access-token",
    ),
    K(
        "square_legacy_token",
        "sq0atp-" + m(URL, 22),
        "SQUARE_TOKEN={v}",
        GL + "square-access-token",
    ),
    K(
        "square_oauth_secret",
        "sq0csp-" + m(URL, 43),
        "square oauth {v}",
        "detect-secrets square_oauth plugin",
    ),
    K(
        "braintree_token",
        "access_token$production$" + r(LOW + DIG, 16) + "$" + r(HEX, 32),
        "braintree {v}",
        "developer.paypal.com/braintree/docs (access_token$production$)",
    ),
    K(
        "shopify_access",
        "shpat_" + r(HEX, 32),
        "X-Shopify-Access-Token: {v}",
        GL + "shopify-access-token",
    ),
    K("shopify_custom", "shpca_" + r(HEX, 32), "token {v}", GL + "shopify-custom-access-token"),
    K(
        "shopify_private",
        "shppa_" + r(HEX, 32),
        "token {v}",
        GL + "shopify-private-app-access-token",
    ),
    K("shopify_shared_secret", "shpss_" + r(HEX, 32), "secret {v}", GL + "shopify-shared-secret"),
    K("shippo_token", "shippo_live_" + r(HEX, 40), "shippo {v}", GL + "shippo-api-token"),
    K("easypost_key", "EZAK" + m(B62, 54), "easypost {v}", GL + "easypost-api-token"),
    K("duffel_token", "duffel_live_" + m(URL, 43), "duffel {v}", GL + "duffel-api-token"),
    K(
        "flutterwave_secret",
        "FLWSECK_TEST-" + r("abcdefgh" + DIG, 32) + "-X",
        "flw {v}",
        GL + "flutterwave-secret-key",
    ),
    K("coinbase_key", m(URL, 64), "COINBASE_API_SECRET={v}", GL + "coinbase-access-token"),
    # --- messaging and email
    K(
        "slack_bot",
        "xoxb-" + r(DIG, 12) + "-" + r(DIG, 13) + "-" + m(B62, 24),
        "SLACK_BOT_TOKEN={v}",
        GL + "slack-bot-token",
    ),
    K(
        "slack_user",
        "xoxp-" + r(DIG, 12) + "-" + r(DIG, 12) + "-" + r(DIG, 13) + "-" + r(HEX, 32),
        "slack {v}",
        GL + "slack-user-token",
    ),
    K(
        "slack_app",
        "xapp-1-A" + r(UP + DIG, 10) + "-" + r(DIG, 13) + "-" + r(HEX, 64),
        "SLACK_APP_TOKEN={v}",
        GL + "slack-app-token",
    ),
    K("slack_config", "xoxe.xoxp-1-" + m(B62, 163), "config {v}", GL + "slack-config-access-token"),
    K(
        "slack_webhook",
        "https://hooks.slack.com/services/T"
        + r(UP + DIG, 8)
        + "/B"
        + r(UP + DIG, 10)
        + "/"
        + m(B62, 24),
        "curl -X POST {v} -d @m.json",
        GL + "slack-webhook-url",
    ),
    K(
        "teams_webhook",
        "https://acme.webhook.office.com/webhookb2/"
        + uuid4()
        + "@"
        + uuid4()
        + "/IncomingWebhook/"
        + r(HEX, 32)
        + "/"
        + uuid4(),
        "requests.post('{v}')",
        GL + "microsoft-teams-webhook",
    ),
    K(
        "discord_bot",
        "MTE" + m(B62, 23) + "." + m(URL, 6) + "." + m(URL, 38),
        "client.run('{v}')",
        "discord.com/developers/docs/reference#authentication",
    ),
    K(
        "discord_webhook",
        "https://discord.com/api/webhooks/" + r(DIG, 18) + "/" + m(URL, 68),
        "curl {v}",
        "discord.com/developers/docs/resources/webhook",
    ),
    K(
        "telegram_bot",
        r(DIG, 10) + ":AA" + m(URL, 33),
        "bot = Bot('{v}')",
        "core.telegram.org/bots/api#authorizing-your-bot",
    ),
    K(
        "sendgrid_key",
        "SG." + m(URL, 22) + "." + m(URL, 43),
        "SendGridAPIClient('{v}')",
        GL + "sendgrid-api-token",
    ),
    K("mailgun_key", "key-" + r(HEX, 32), "auth=('api', '{v}')", GL + "mailgun-private-api-token"),
    K("mailchimp_key", r(HEX, 32) + "-us21", "mailchimp {v}", GL + "mailchimp-api-key"),
    K(
        "brevo_key",
        "xkeysib-" + r(HEX, 64) + "-" + m(B62, 16),
        "brevo {v}",
        GL + "sendinblue-api-token",
    ),
    K(
        "brevo_smtp_key",
        "xsmtpsib-" + r(HEX, 64) + "-" + m(B62, 16),
        "smtp password {v}",
        "developers.brevo.com (xsmtpsib- SMTP keys)",
    ),
    K("twilio_api_key", "SK" + r(HEX, 32), "TWILIO_API_KEY={v}", GL + "twilio-api-key"),
    K(
        "twilio_auth_token",
        r(HEX, 32),
        "TWILIO_AUTH_TOKEN={v}",
        "twilio.com/docs/iam/api/account (auth token, 32 hex)",
    ),
    K(
        "postmark_server_token",
        uuid4(),
        "X-Postmark-Server-Token: {v}",
        "postmarkapp.com/developer/api/overview#authentication",
    ),
    K("messagebird_key", m(B62, 25), "MESSAGEBIRD_API_KEY={v}", GL + "messagebird-api-token"),
    # --- social
    K(
        "twitter_bearer",
        "AAAAAAAAAAAAAAAAAAAAA" + m(B62 + "%", 80),
        "TWITTER_BEARER_TOKEN={v}",
        GL + "twitter-bearer-token",
    ),
    K(
        "facebook_access_token",
        "EAAG" + m(B62, 150),
        "access_token={v}",
        GL + "facebook-page-access-token",
    ),
    K("yandex_api_key", "AQVN" + m(URL, 36), "YC_API_KEY={v}", GL + "yandex-api-key"),
    K("okta_token", "00" + m(URL, 40), "Authorization: SSWS {v}", GL + "okta-access-token"),
    # --- generic tokens, keys and passwords in context
    K(
        "jwt",
        jwt_body({"sub": r(DIG, 8), "role": "service_role"}),
        "SUPABASE_SERVICE_KEY={v}",
        GL + "jwt",
    ),
    K("bearer_header", m(URL, 40), "-H 'Authorization: Bearer {v}'", "RFC 6750 section 2.1"),
    K(
        "basic_header",
        base64.b64encode(b"deploy:" + r(B62, 16).encode()).decode(),
        "Authorization: Basic {v}",
        "RFC 7617",
    ),
    K(
        "token_scheme_header",
        m(B62, 40),
        'curl -H "Authorization: Token {v}" https://api.example.com',
        GL + "curl-auth-header (Token scheme)",
    ),
    K(
        "bot_scheme_header",
        m(URL, 59),
        "Authorization: Bot {v}",
        "discord.com/developers/docs/reference#authentication (Bot scheme)",
    ),
    K(
        "genie_key_header",
        uuid4(),
        "Authorization: GenieKey {v}",
        "docs.opsgenie.com/docs/authentication (GenieKey scheme)",
    ),
    K("x_auth_token_header", m(B62, 32), "X-Auth-Token: {v}", "OpenStack Keystone X-Auth-Token"),
    K(
        "x_custom_key_header",
        m(B62, 36),
        "curl -H 'X-Acme-Api-Key: {v}' https://api.acme.dev",
        "gitleaks generic-api-key (header names with key/token)",
    ),
    K(
        "private_token_header",
        m(URL, 26),
        '--header "PRIVATE-TOKEN: {v}"',
        "docs.gitlab.com/ee/api/rest/authentication.html (PRIVATE-TOKEN header)",
    ),
    K(
        "curl_user_password",
        "deploy:" + m(B62, 14),
        "curl -u {v} https://ci.example.com/job",
        GL + "curl-auth-user",
    ),
    K(
        "curl_user_password_long",
        "admin:" + "P@" + m(B62, 12),
        "curl --user '{v}' https://x.io",
        GL + "curl-auth-user",
    ),
    K(
        "wget_password",
        m(B62, 14),
        "wget --user=bob --password={v} https://files.example.com/a",
        "GNU wget manual (--password)",
    ),
    K(
        "docker_login_password",
        m(B62, 18),
        "docker login -u deploy -p {v} registry.example.com",
        "docs.docker.com/reference/cli/docker/login (-p)",
    ),
    K(
        "helm_password",
        m(B62, 18),
        "helm repo add acme https://charts.acme.io --username u --password {v}",
        "helm.sh/docs/helm/helm_repo_add",
    ),
    K(
        "url_token_user",
        m(B62, 40),
        "git clone https://{v}@github.com/acme/private.git",
        "git credential in URL user part (token as user name)",
    ),
    K(
        "url_oauth2_user",
        m(URL, 26),
        "https://oauth2:{v}@gitlab.com/acme/app.git",
        "docs.gitlab.com/ee/user/project/deploy_tokens (oauth2:token@ URLs)",
    ),
    K(
        "postgres_url",
        "Pg" + m(B62, 14),
        "DATABASE_URL=postgres://app:{v}@db:5432/x",
        "RFC 3986 userinfo; postgresql.org/docs/current/libpq-connect.html",
    ),
    K(
        "mongodb_url",
        m(B62, 18),
        "mongodb+srv://admin:{v}@cluster0.x.mongodb.net/db",
        "mongodb.com/docs/manual/reference/connection-string",
    ),
    K(
        "amqp_url",
        m(B62, 16),
        "CELERY_BROKER_URL=amqp://user:{v}@rabbit:5672//",
        "rabbitmq.com/docs/uri-spec",
    ),
    K(
        "mssql_connection_password",
        "Sa" + m(B62, 12) + "!",
        "Server=tcp:db,1433;User Id=sa;Password={v};",
        "learn.microsoft.com/dotnet/framework/data/adonet/connection-string-syntax",
    ),
    K(
        "docker_config_auth",
        base64.b64encode(b"deploy:" + m(B62, 20).encode()).decode(),
        '{"auths": {"ghcr.io": {"auth": "{v}"}}}',
        "docs.docker.com/reference/cli/docker/login",
    ),
    K(
        "npmrc_auth",
        base64.b64encode(b"ci:" + m(B62, 20).encode()).decode(),
        "_auth={v}",
        "docs.npmjs.com/cli/configuring-npm/npmrc#auth-related-configuration",
    ),
    K(
        "netrc_password",
        m(B62, 14),
        "machine api.heroku.com login me password {v}",
        "gnu.org/software/inetutils/manual/html_node/The-_002enetrc-file.html",
    ),
    K(
        "pgpass_line",
        m(B62, 14),
        "db.internal:5432:app:app:{v}",
        "postgresql.org/docs/current/libpq-pgpass.html",
    ),
    K(
        "kube_token",
        "eyJhbGciOiJSUzI1NiIsImtpZCI6I" + m(URL, 600),
        "users:\n- name: ci\n  user:\n    token: {v}\n",
        "kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig",
    ),
    K(
        "django_secret_key",
        "django-insecure-" + m(B62 + "!@#%^&*(-_=+)", 50),
        "SECRET_KEY = '{v}'",
        "docs.djangoproject.com/en/stable/ref/settings/#secret-key",
    ),
    K("env_password", "Hunter" + m(B62, 8), "export DB_PASSWORD={v}", "12factor.net/config"),
    K(
        "yaml_password",
        "Xk9" + m(B62, 9),
        "  MYSQL_ROOT_PASSWORD: {v}\n",
        "hub.docker.com/_/mysql (MYSQL_ROOT_PASSWORD)",
    ),
    K(
        "ssh_private_key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        + "\n".join(b64(300)[i : i + 70] for i in range(0, 400, 70))
        + "\n-----END OPENSSH PRIVATE KEY-----",
        "$ cat ~/.ssh/id_ed25519\n{v}\n",
        "RFC 4716; openssh PROTOCOL.key",
    ),
    K(
        "pkcs8_private_key",
        "-----BEGIN PRIVATE KEY-----\n"
        + "\n".join(b64(600)[i : i + 64] for i in range(0, 800, 64))
        + "\n-----END PRIVATE KEY-----",
        "{v}",
        "RFC 5208 / RFC 7468",
    ),
]


def _sri(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


SHA = hashlib.sha1(b"lookalike").hexdigest()
# Texts that hold ids, digests, public keys and references shaped like credentials; each is
# named for what it is. None may lose a byte.
LOOKALIKES: list[tuple[str, str]] = [
    (
        "anthropic tool_use id",
        f'{{"type": "tool_use", "id": "toolu_01{m(B62, 22)}", "name": "Bash"}}',
    ),
    ("openai tool call id", f'{{"tool_call_id": "call_{m(B62, 24)}", "role": "tool"}}'),
    ("openai completion id", f'{{"id": "chatcmpl-{m(B62, 29)}", "object": "chat.completion"}}'),
    ("anthropic message id", f'{{"id": "msg_01{m(B62, 22)}", "type": "message"}}'),
    ("anthropic request id", f"request-id: req_011C{m(B62, 20)}"),
    ("openai response id", f'"id": "resp_{r(HEX, 48)}"'),
    ("openai file id", f"uploaded file-{m(B62, 22)} for batch_{r(HEX, 32)}"),
    ("anthropic batch id", f"msgbatch_01{m(B62, 22)} ended"),
    ("stripe customer id", f"customer: cus_{m(B62, 14)}"),
    ("stripe payment intent id", f"PaymentIntent pi_3{m(B62, 23)} succeeded"),
    ("stripe publishable key", f"STRIPE_PUBLISHABLE_KEY=pk_live_{m(B62, 99)}"),
    ("mapbox public token", f"mapboxgl.accessToken = 'pk.eyJ1Ijoi{m(B62, 50)}.{m(URL, 22)}';"),
    ("sentry dsn", f"SENTRY_DSN=https://{r(HEX, 32)}@o{r(DIG, 6)}.ingest.sentry.io/{r(DIG, 7)}"),
    ("github graphql node id", f'"node_id": "I_kwDO{m(URL, 18)}", "id": 1234'),
    ("git sha in log", f"commit {SHA}\nMerge: 1a2b3c4 5d6e7f8\n    Fix token refresh (#12)"),
    ("docker image digest", f"python@sha256:{hashlib.sha256(b'py').hexdigest()}"),
    (
        "docker container id",
        f"CONTAINER ID {hashlib.sha256(b'c').hexdigest()[:12]} web\n"
        f"{hashlib.sha256(b'full').hexdigest()}",
    ),
    ("npm integrity", f'"integrity": "{_sri(b"left-pad")}"'),
    (
        "go.sum line",
        f"golang.org/x/text v0.14.0 h1:{base64.b64encode(hashlib.sha256(b'g').digest()).decode()}",
    ),
    ("pip hash", f"requests==2.31.0 --hash=sha256:{hashlib.sha256(b'r').hexdigest()}"),
    ("uuid request id", f"X-Request-Id: {uuid4()}"),
    (
        "github request id",
        f"X-GitHub-Request-Id: {r(HEX.upper(), 4)}:{r(HEX.upper(), 5)}:"
        f"{r(HEX.upper(), 7)}:{r(HEX.upper(), 7)}:{r(HEX.upper(), 8)}",
    ),
    ("etag", f'ETag: W/"{r(HEX, 40)}"'),
    ("kubernetes pod name", f"web-7d4b9c8f6d-{r(LOW + DIG, 5)}   1/1   Running"),
    ("webpack chunk", f"static/js/main.{r(HEX, 8)}.chunk.js  static/css/app.{r(HEX, 20)}.css"),
    ("conda build string", "numpy-1.26.4-py311h64a7726_0.conda  openssl-3.2.1-hd590300_1"),
    ("base64 test fixture", f'FIXTURE_PNG_BASE64 = "{b64(180)}"'),
    ("base64 image data uri", f'<img src="data:image/png;base64,{b64(150)}">'),
    ("ssh public key", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{m(B64, 43)} jane@laptop"),
    ("certificate", "-----BEGIN CERTIFICATE-----\n" + b64(300) + "\n-----END CERTIFICATE-----"),
    (
        "aws documented example key",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    ("env reference", 'curl -H "Authorization: Bearer $GITHUB_TOKEN" -u "$USER:$PASS" api'),
    (
        "docker login from stdin",
        'echo "$CR_PAT" | docker login ghcr.io -u USERNAME --password-stdin',
    ),
    ("curl user without password", "curl -u admin https://localhost:9200  # prompts for it"),
    ("templated header", "Authorization: Token {{ api_token }}\nX-Api-Key: ${API_KEY}"),
    ("placeholder header", "X-Auth-Token: <your-token-here>\nAuthorization: Bearer YOUR_TOKEN"),
    (
        "python identifiers",
        "def test_refresh_token_rotation_keeps_session_alive_after_expiry():\n"
        "    TOKEN_REFRESH_INTERVAL_SECONDS = 3600",
    ),
    ("camel case class", "class HTTPBearerTokenAuthenticationMiddlewareV2(BaseMiddleware):"),
    ("tokenizer config", '{"tokenizer_class": "LlamaTokenizerFast", "bos_token": "<s>"}'),
    ("hex color and ids", "color: #1a2b3c; --id: 0x7ffee4b8c9a0; build 20240611.3"),
    ("url without secret", f"https://github.com/acme/app/pull/12?tab=files&sha={SHA}"),
    ("google analytics id", "gtag('config', 'G-" + r(UP + DIG, 10) + "'); UA-12345678-1"),
    (
        "apt package hashes",
        f"SHA256: {hashlib.sha256(b'deb').hexdigest()}\nMD5Sum: {hashlib.md5(b'deb').hexdigest()}",
    ),
    (
        "pytest node ids",
        "tests/test_auth.py::test_api_key_header_is_sent PASSED\n"
        "tests/test_auth.py::test_bearer_token_expired FAILED",
    ),
    ("jupyter cell ids", f'{{"cell_type": "code", "id": "{r(HEX, 8)}-{r(HEX, 4)}"}}'),
    ("semver and wheel names", "cryptography-42.0.5-cp39-abi3-manylinux_2_28_x86_64.whl"),
    ("lockfile checksum", f'checksum = "{hashlib.sha256(b"serde").hexdigest()}"'),
    ("session id log line", f"INFO session started id={uuid4()} user=42"),
    ("password prompt", "Password for 'https://github.com': \nEnter passphrase for key:"),
    (
        "help text",
        "  -p, --password TEXT  Password to use (or set $PGPASSWORD)\n"
        "  --token TOKEN        API token",
    ),
]


WINDOW = 16


def leaked(value: str, scrubbed: str) -> bool:
    """Whether any WINDOW characters of the value are still in the text."""
    if len(value) <= WINDOW:
        return value in scrubbed
    return any(value[i : i + WINDOW] in scrubbed for i in range(len(value) - WINDOW + 1))


def evaluate(scrubber: Any) -> dict[str, object]:
    """Recall per split and look-alikes redacted, for `benchmarks/bench_secrets.py`."""
    missed: dict[str, list[Kind]] = {"design": [], "heldout": []}
    total = {"design": 0, "heldout": 0}
    for kind in KINDS:
        split = split_of(kind.name)
        total[split] += 1
        if leaked(kind.value, scrubber.scrub(kind.text)):
            missed[split].append(kind)
    redacted = [name for name, text in LOOKALIKES if scrubber.scrub(text) != text]
    found = len(KINDS) - sum(map(len, missed.values()))
    return {
        "kinds": len(KINDS),
        "recall": round(found / len(KINDS), 4),
        "recall_design": round(1 - len(missed["design"]) / total["design"], 4),
        "recall_heldout": round(1 - len(missed["heldout"]) / total["heldout"], 4),
        "heldout_kinds": total["heldout"],
        "missed_design": [k.name for k in missed["design"]],
        "missed_heldout_count": len(missed["heldout"]),
        "lookalikes": len(LOOKALIKES),
        "lookalikes_redacted": len(redacted),
        "false_positive_rate": round(len(redacted) / len(LOOKALIKES), 4),
        "redacted_lookalikes": redacted,
    }
