"""Token formats: credentials recognisable by their own shape, wherever they appear.

The detect-secrets plugins' regexes come first (maintained against real token formats); their
JWT plugin also vets every JWT candidate (each part must decode, the first two as JSON). The
formats the library lacks (LLM providers, package registries, newer chat and cloud tokens)
follow. Each rule is a whole word: `<kind>` names the issuer, so the counts on the dataset card
say which services' credentials were seen.
"""

from __future__ import annotations

from collections.abc import Callable

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from builder.scrub.rule import Rule, mixed, mixed_case, token


def library_rules() -> list[Rule]:
    """Rules made from detect-secrets plugin regexes (wrapped with word boundaries)."""
    aws_id, aws_secret = AWSKeyDetector.denylist
    slack_token, slack_hook = SlackDetector.denylist
    aws_prefixes = ("a3t", "abia", "acca", "akia", "asia")
    rules = [
        token("aws_access_key", aws_id, hints=aws_prefixes),
        Rule("aws_secret_key", aws_secret, group=1, hints=("aws",)),
        token("slack_token", slack_token, hints=("xox",)),
        Rule("slack_webhook", slack_hook, hints=("hooks.slack.com",)),
        token("openai_key", OpenAIDetector.denylist[0], hints=("t3blbkfj",)),
        token("sendgrid_key", SendGridDetector.denylist[0], hints=("sg.",)),
        Rule("azure_storage_key", AzureStorageKeyDetector.denylist[0], hints=("accountkey=",)),
        token("square_oauth_secret", SquareOAuthDetector.denylist[0], hints=("sq0csp-",)),
        token("telegram_bot_token", TelegramBotTokenDetector.denylist[0], hints=(":",)),
        token("mailchimp_key", MailchimpDetector.denylist[0], hints=("-us",)),
        Rule("npm_token", NpmDetector.denylist[0], group=1, hints=("_authtoken",)),
    ]
    github = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
    rules += [token("github_token", p, hints=github) for p in GitHubTokenDetector.denylist]
    gitlab = ("gl", "gr1348941")
    rules += [token("gitlab_token", p, hints=gitlab) for p in GitLabTokenDetector.denylist]
    rules += [token("pypi_token", p, hints=("pypi-",)) for p in PypiTokenDetector.denylist]
    stripe = ("k_live_", "k_test_")
    rules += [token("stripe_key", p, hints=stripe) for p in StripeDetector.denylist]
    rules += [token("twilio_key", p, check=mixed) for p in TwilioKeyDetector.denylist]
    return rules


_Own = tuple[str, str, Callable[[str], bool] | None, tuple[str, ...]]
OWN_FORMATS: tuple[_Own, ...] = (
    # LLM providers (OpenRouter before the generic `sk-` form, which it would also match)
    ("anthropic_key", r"sk-ant-[A-Za-z0-9_\-]{20,}", None, ("sk-ant-",)),
    ("openrouter_key", r"sk-or-v1-[0-9a-f]{64}", None, ("sk-or-",)),
    ("openai_key", r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}", mixed, ("sk-",)),
    ("groq_api_key", r"gsk_[A-Za-z0-9]{48,56}", mixed, ("gsk_",)),
    ("xai_api_key", r"xai-[A-Za-z0-9]{70,90}", mixed, ("xai-",)),
    ("replicate_token", r"r8_[A-Za-z0-9]{37}", mixed, ("r8_",)),
    ("perplexity_key", r"pplx-[A-Za-z0-9]{48}", mixed, ("pplx-",)),
    ("huggingface_token", r"hf_[A-Za-z0-9]{30,}", mixed_case, ("hf_",)),
    # cloud
    ("google_api_key", r"AIza[0-9A-Za-z_\-]{35}", None, ("aiza",)),
    ("google_oauth_secret", r"GOCSPX-[A-Za-z0-9_\-]{28}", None, ("gocspx-",)),
    ("azure_client_secret", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}", None, ("q~",)),
    ("alibaba_access_key", r"LTAI[A-Za-z0-9]{12,20}", mixed, ("ltai",)),
    ("digitalocean_token", r"do[por]_v1_[a-f0-9]{64}", None, ("_v1_",)),
    ("vault_token", r"hv[sb]\.[A-Za-z0-9_\-]{24,}", mixed, ("hvs.", "hvb.")),
    ("terraform_token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-]{60,70}", None, ("atlasv1",)),
    ("databricks_token", r"dapi[0-9a-f]{32}(?:-\d)?", None, ("dapi",)),
    ("pulumi_token", r"pul-[0-9a-f]{40}", None, ("pul-",)),
    # VCS, package registries, developer tools
    ("github_token", r"github_pat_[A-Za-z0-9_]{60,}", None, ("github_pat_",)),
    ("gitlab_token", r"glpat-[A-Za-z0-9_\-]{20,}", None, ("glpat-",)),
    ("npm_token", r"npm_[A-Za-z0-9]{36}", mixed, ("npm_",)),
    ("pypi_token", r"pypi-[A-Za-z0-9_\-]{50,}", None, ("pypi-",)),
    ("dockerhub_token", r"dckr_pat_[A-Za-z0-9_\-]{27}", None, ("dckr_pat_",)),
    ("rubygems_key", r"rubygems_[0-9a-f]{48}", None, ("rubygems_",)),
    ("artifactory_token", r"AKC[A-Za-z0-9]{60,}", mixed, ("akc",)),
    ("postman_api_key", r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}", None, ("pmak-",)),
    ("linear_api_key", r"lin_api_[A-Za-z0-9]{40}", mixed, ("lin_api_",)),
    ("newrelic_key", r"NRAK-[A-Z0-9]{27}", mixed, ("nrak-",)),
    # payment
    ("stripe_key", r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,}", None, ("k_live_", "k_test_")),
    ("stripe_webhook_secret", r"whsec_[A-Za-z0-9]{32,}", mixed, ("whsec_",)),
    ("square_access_token", r"EAAA[A-Za-z0-9_\-]{60}", mixed, ("eaaa",)),
    (
        "braintree_token",
        r"access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}",
        None,
        ("access_token$",),
    ),
    ("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", None, ("shp",)),
    # email and chat
    ("sendgrid_key", r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}", None, ("sg.",)),
    ("mailgun_key", r"key-[0-9a-f]{32}", None, ("key-",)),
    ("brevo_key", r"xkeysib-[0-9a-f]{64}-[A-Za-z0-9]{16}", None, ("xkeysib-",)),
    ("slack_token", r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", None, ("xapp-",)),
    # Bot tokens. detect-secrets' plugin wants a 27-character third part and a shorter id;
    # new tokens have longer ids and a 38-character HMAC part, so this form replaces it.
    (
        "discord_bot_token",
        r"[MNO][A-Za-z\d_\-]{23,27}\.[A-Za-z\d_\-]{6}\.[A-Za-z\d_\-]{27,38}",
        mixed,
        (".",),
    ),
    (
        "discord_webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{17,20}/[A-Za-z0-9_\-]{60,68}",
        None,
        ("/api/webhooks/",),
    ),
    (
        "jwt",
        r"eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
        JwtTokenDetector.is_formally_valid,
        ("eyj",),
    ),
)


def own_rules() -> list[Rule]:
    """Token formats detect-secrets lacks."""
    return [token(kind, p, check=c, hints=h) for kind, p, c, h in OWN_FORMATS]
