// The format corpus: a labelled corpus built independently of lake's rule table. Each kind is a
// secret format as the public rule sets document it (gitleaks' config/gitleaks.toml and
// cmd/generate/config/rules, trufflehog's detectors, vendors' docs): a prefix, a charset and a
// length, and the name it is usually assigned to. Nothing here reads src/internal/rules.ts or
// vendors.ts. Every kind is planted, with a fresh random body, in four locations — prose,
// command, tool output, file content — each inside a real Claude Code or Codex record line (JSON
// escaped), in several phrasings; a bait set of non-secrets (git SHAs, npm integrity hashes, image
// digests, base64 PNGs, SSH public keys, AWS documentation keys, ${VAR} placeholders, UUIDs) is
// planted the same way. Secret spans are marked while building (private-use characters that
// JSON.stringify leaves alone) and the marks removed at the end, so labels are exact.
import { prng } from "../src/internal/fake.js";

/** Where a secret sits in a session. */
export type Location = "prose" | "command" | "tool-output" | "file-content";
export const LOCATIONS: readonly Location[] = ["prose", "command", "tool-output", "file-content"];

/** One labelled line. */
export interface FormatItem {
  readonly id: string;
  /** The kind planted (`bait:<what>` for a non-secret). */
  readonly kind: string;
  readonly location: Location;
  /** The record line (JSON text, as it lands on disk). */
  readonly text: string;
  /** Spans of secrets in `text` (escaped as the line escapes them). */
  readonly labels: readonly { start: number; end: number }[];
}

const HEX = "0123456789abcdef";
const UP = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LO = "abcdefghijklmnopqrstuvwxyz";
const DI = "0123456789";
const AN = UP + LO + DI;
const LN = LO + DI;
const UN = UP + DI;
const B64 = AN + "+/";
const U64 = AN + "-_";
const B32 = UP + "234567";
const BECH = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
const PW = AN + "!%^*_-+.#@";

type Part = string | readonly [string, number] | readonly [string, number, number];

/** A documented format. `vendor` is the product name a person would use in prose. */
interface Kind {
  readonly kind: string;
  readonly vendor: string;
  /** The variable it is usually assigned to. */
  readonly env: string;
  readonly parts: readonly Part[];
  /** When set, only this part of the token is the secret (URLs, connection strings): [from, to) part indexes. */
  readonly secretParts?: readonly [number, number];
}

const k = (kind: string, vendor: string, env: string, ...parts: Part[]): Kind => ({ kind, vendor, env, parts });
const ks = (kind: string, vendor: string, env: string, secretParts: [number, number], ...parts: Part[]): Kind => ({ kind, vendor, env, parts, secretParts });
const uuid: Part[] = [[HEX, 8], "-", [HEX, 4], "-", [HEX, 4], "-", [HEX, 4], "-", [HEX, 12]];

/** The kinds: formats taken from the public rule sets' documentation. */
export const KINDS: readonly Kind[] = [
  // cloud providers
  k("aws-access-key-id", "AWS", "AWS_ACCESS_KEY_ID", "AKIA", [B32, 16]),
  k("aws-temporary-key-id", "AWS", "AWS_ACCESS_KEY_ID", "ASIA", [B32, 16]),
  k("aws-secret-access-key", "AWS", "AWS_SECRET_ACCESS_KEY", [B64, 40]),
  k("aws-bedrock-api-key", "Amazon Bedrock", "AWS_BEARER_TOKEN_BEDROCK", "ABSK", [B64, 120, 160]),
  k("gcp-api-key", "Google Cloud", "GOOGLE_API_KEY", "AIza", [U64, 35]),
  k("google-oauth-client-secret", "Google OAuth", "GOOGLE_CLIENT_SECRET", "GOCSPX-", [U64, 28]),
  k("google-oauth-access-token", "Google", "GOOGLE_OAUTH_ACCESS_TOKEN", "ya29.", [U64, 100, 180]),
  k("azure-ad-client-secret", "Azure AD", "AZURE_CLIENT_SECRET", [AN, 3], "8Q~", [AN + "_-.~", 34]),
  ks("azure-storage-account-key", "Azure Storage", "AZURE_STORAGE_CONNECTION_STRING", [1, 3], "DefaultEndpointsProtocol=https;AccountName=prodlogs01;AccountKey=", [B64, 86], "==", ";EndpointSuffix=core.windows.net"),
  ks("azure-service-bus-key", "Azure Service Bus", "SERVICEBUS_CONNECTION", [1, 2], "Endpoint=sb://orders-prod.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=", [B64, 43], "="),
  ks("azure-sas-token", "Azure", "AZURE_SAS_URL", [1, 2], "https://prodlogs01.blob.core.windows.net/exports/day.csv?sv=2022-11-02&ss=b&srt=sco&sp=rwdlac&se=2026-12-31T00:00:00Z&st=2026-01-01T00:00:00Z&spr=https&sig=", [B64, 43], "%3D"),
  k("alibaba-access-key-id", "Alibaba Cloud", "ALIBABA_CLOUD_ACCESS_KEY_ID", "LTAI", [AN, 20]),
  k("alibaba-secret-key", "Alibaba Cloud", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", [AN, 30]),
  k("digitalocean-pat", "DigitalOcean", "DIGITALOCEAN_TOKEN", "dop_v1_", [HEX, 64]),
  k("digitalocean-oauth", "DigitalOcean", "DO_OAUTH_TOKEN", "doo_v1_", [HEX, 64]),
  k("digitalocean-refresh", "DigitalOcean", "DO_REFRESH_TOKEN", "dor_v1_", [HEX, 64]),
  k("yandex-api-key", "Yandex Cloud", "YC_API_KEY", "AQVN", [U64, 36]),
  k("cloudflare-api-token", "Cloudflare", "CLOUDFLARE_API_TOKEN", [U64, 40]),
  k("cloudflare-global-api-key", "Cloudflare", "CLOUDFLARE_API_KEY", [HEX, 37]),
  k("cloudflare-origin-ca-key", "Cloudflare", "CF_ORIGIN_CA_KEY", "v1.0-", [HEX, 24], "-", [HEX, 146]),
  k("heroku-api-key-v2", "Heroku", "HEROKU_API_KEY", "HRKU-AA", [U64, 58]),
  k("heroku-api-key", "Heroku", "HEROKU_API_KEY", ...uuid),
  k("fly-access-token", "Fly.io", "FLY_API_TOKEN", "fo1_", [U64, 43]),
  k("vercel-token", "Vercel", "VERCEL_TOKEN", "vcp_", [AN, 56]),
  k("netlify-token", "Netlify", "NETLIFY_AUTH_TOKEN", "nfp_", [AN, 36]),
  k("render-api-key", "Render", "RENDER_API_KEY", "rnd_", [AN, 32]),
  k("scalingo-token", "Scalingo", "SCALINGO_API_TOKEN", "tk-us-", [U64, 48]),
  k("openshift-token", "OpenShift", "OPENSHIFT_TOKEN", "sha256~", [U64, 43]),
  k("tailscale-auth-key", "Tailscale", "TS_AUTHKEY", "tskey-auth-", [AN, 17], "-", [AN, 32]),
  // AI providers
  k("anthropic-api-key", "Anthropic", "ANTHROPIC_API_KEY", "sk-ant-api03-", [U64, 93], "AA"),
  k("anthropic-admin-key", "Anthropic", "ANTHROPIC_ADMIN_KEY", "sk-ant-admin01-", [U64, 93], "AA"),
  k("openai-project-key", "OpenAI", "OPENAI_API_KEY", "sk-proj-", [U64, 58], "T3BlbkFJ", [U64, 58]),
  k("openai-legacy-key", "OpenAI", "OPENAI_API_KEY", "sk-", [AN, 20], "T3BlbkFJ", [AN, 20]),
  k("openai-service-account-key", "OpenAI", "OPENAI_API_KEY", "sk-svcacct-", [U64, 74], "T3BlbkFJ", [U64, 74]),
  k("xai-api-key", "xAI", "XAI_API_KEY", "xai-", [AN, 80]),
  k("groq-api-key", "Groq", "GROQ_API_KEY", "gsk_", [AN, 52]),
  k("perplexity-api-key", "Perplexity", "PERPLEXITY_API_KEY", "pplx-", [AN, 48]),
  k("openrouter-api-key", "OpenRouter", "OPENROUTER_API_KEY", "sk-or-v1-", [HEX, 64]),
  k("huggingface-token", "Hugging Face", "HF_TOKEN", "hf_", [AN, 34]),
  k("huggingface-org-token", "Hugging Face", "HF_ORG_TOKEN", "api_org_", [AN, 34]),
  k("replicate-token", "Replicate", "REPLICATE_API_TOKEN", "r8_", [AN, 37]),
  k("cohere-api-key", "Cohere", "COHERE_API_KEY", [AN, 40]),
  k("mistral-api-key", "Mistral", "MISTRAL_API_KEY", [AN, 32]),
  k("deepseek-api-key", "DeepSeek", "DEEPSEEK_API_KEY", "sk-", [HEX, 32]),
  k("langsmith-api-key", "LangSmith", "LANGSMITH_API_KEY", "lsv2_pt_", [HEX, 32], "_", [HEX, 10]),
  k("pinecone-api-key", "Pinecone", "PINECONE_API_KEY", "pcsk_", [AN, 6], "_", [AN, 64]),
  k("tavily-api-key", "Tavily", "TAVILY_API_KEY", "tvly-", [AN, 32]),
  k("cerebras-api-key", "Cerebras", "CEREBRAS_API_KEY", "csk-", [LN, 48]),
  k("fireworks-api-key", "Fireworks", "FIREWORKS_API_KEY", "fw_", [AN, 24]),
  k("elevenlabs-api-key", "ElevenLabs", "ELEVENLABS_API_KEY", "sk_", [HEX, 48]),
  k("gemini-api-key", "Gemini", "GEMINI_API_KEY", "AIza", [U64, 35]),
  // source hosting, CI, registries
  k("github-pat", "GitHub", "GITHUB_TOKEN", "ghp_", [AN, 36]),
  k("github-oauth", "GitHub", "GH_OAUTH_TOKEN", "gho_", [AN, 36]),
  k("github-app-token", "GitHub", "GH_APP_TOKEN", "ghs_", [AN, 36]),
  k("github-refresh-token", "GitHub", "GH_REFRESH_TOKEN", "ghr_", [AN, 36]),
  k("github-fine-grained-pat", "GitHub", "GH_PAT", "github_pat_", [AN, 22], "_", [AN, 59]),
  k("gitlab-pat", "GitLab", "GITLAB_TOKEN", "glpat-", [U64, 20]),
  k("gitlab-deploy-token", "GitLab", "GITLAB_DEPLOY_TOKEN", "gldt-", [U64, 20]),
  k("gitlab-runner-token", "GitLab", "CI_RUNNER_TOKEN", "glrt-", [U64, 20]),
  k("gitlab-pipeline-trigger", "GitLab", "TRIGGER_TOKEN", "glptt-", [HEX, 40]),
  k("gitlab-runner-registration", "GitLab", "REGISTRATION_TOKEN", "GR1348941", [U64, 20]),
  k("gitlab-oauth-secret", "GitLab", "GITLAB_OAUTH_SECRET", "gloas-", [U64, 64]),
  ks("gitlab-session-cookie", "GitLab", "GITLAB_SESSION", [1, 2], "_gitlab_session=", [LN, 32]),
  k("bitbucket-app-password", "Bitbucket", "BITBUCKET_APP_PASSWORD", "ATBB", [AN, 32]),
  k("atlassian-api-token", "Atlassian", "JIRA_API_TOKEN", "ATATT3", [U64, 186]),
  k("npm-token", "npm", "NPM_TOKEN", "npm_", [AN, 36]),
  k("pypi-token", "PyPI", "PYPI_TOKEN", "pypi-AgEIcHlwaS5vcmc", [U64, 70, 120]),
  k("rubygems-key", "RubyGems", "GEM_HOST_API_KEY", "rubygems_", [HEX, 48]),
  k("clojars-token", "Clojars", "CLOJARS_TOKEN", "CLOJARS_", [LN, 60]),
  k("docker-hub-pat", "Docker Hub", "DOCKERHUB_TOKEN", "dckr_pat_", [U64, 27]),
  k("artifactory-api-key", "Artifactory", "ARTIFACTORY_API_KEY", "AKCp", [AN, 69]),
  k("artifactory-reference-token", "JFrog", "JFROG_ACCESS_TOKEN", "cmVmd", [AN, 59]),
  k("buildkite-token", "Buildkite", "BUILDKITE_API_TOKEN", "bkua_", [HEX, 40]),
  k("circleci-pat", "CircleCI", "CIRCLECI_TOKEN", "CCIPAT_", [AN, 22], "_", [HEX, 40]),
  k("sonarqube-token", "SonarQube", "SONAR_TOKEN", "squ_", [HEX, 40]),
  k("sourcegraph-token", "Sourcegraph", "SRC_ACCESS_TOKEN", "sgp_", [HEX, 16], "_", [HEX, 40]),
  k("terraform-cloud-token", "Terraform Cloud", "TF_API_TOKEN", [AN, 14], ".atlasv1.", [U64, 67]),
  k("pulumi-token", "Pulumi", "PULUMI_ACCESS_TOKEN", "pul-", [HEX, 40]),
  k("harness-pat", "Harness", "HARNESS_TOKEN", "pat.", [U64, 22], ".", [AN, 24], ".", [AN, 20]),
  k("octopus-api-key", "Octopus Deploy", "OCTOPUS_API_KEY", "API-", [UN, 26]),
  k("codecov-token", "Codecov", "CODECOV_TOKEN", ...uuid),
  k("infracost-token", "Infracost", "INFRACOST_API_KEY", "ico-", [AN, 32]),
  k("doppler-token", "Doppler", "DOPPLER_TOKEN", "dp.pt.", [AN, 43]),
  k("vault-service-token", "Vault", "VAULT_TOKEN", "hvs.", [U64, 90, 110]),
  k("vault-batch-token", "Vault", "VAULT_BATCH_TOKEN", "hvb.", [U64, 140, 180]),
  k("onepassword-service-account", "1Password", "OP_SERVICE_ACCOUNT_TOKEN", "ops_eyJ", [B64, 260, 320]),
  k("onepassword-secret-key", "1Password", "OP_SECRET_KEY", "A3-", [UN, 6], "-", [UN, 11], "-", [UN, 5], "-", [UN, 5], "-", [UN, 5]),
  k("age-secret-key", "age", "SOPS_AGE_KEY", "AGE-SECRET-KEY-1", [BECH.toUpperCase(), 58]),
  // observability, data
  k("datadog-api-key", "Datadog", "DD_API_KEY", [HEX, 32]),
  k("datadog-app-key", "Datadog", "DD_APP_KEY", [HEX, 40]),
  k("grafana-service-account", "Grafana", "GRAFANA_TOKEN", "glsa_", [AN, 32], "_", [HEX, 8]),
  k("grafana-cloud-token", "Grafana Cloud", "GRAFANA_CLOUD_TOKEN", "glc_", [B64, 60, 100]),
  k("sentry-user-token", "Sentry", "SENTRY_AUTH_TOKEN", "sntryu_", [HEX, 64]),
  k("new-relic-user-key", "New Relic", "NEW_RELIC_API_KEY", "NRAK-", [UN, 27]),
  k("new-relic-insert-key", "New Relic", "NEW_RELIC_INSERT_KEY", "NRII-", [U64, 32]),
  k("dynatrace-token", "Dynatrace", "DT_API_TOKEN", "dt0c01.", [UN, 24], ".", [UN, 64]),
  k("databricks-token", "Databricks", "DATABRICKS_TOKEN", "dapi", [HEX, 32]),
  k("clickhouse-secret", "ClickHouse Cloud", "CLICKHOUSE_KEY_SECRET", "4b1d", [AN, 38]),
  k("planetscale-password", "PlanetScale", "DATABASE_PASSWORD", "pscale_pw_", [U64, 43]),
  k("planetscale-token", "PlanetScale", "PLANETSCALE_SERVICE_TOKEN", "pscale_tkn_", [U64, 43]),
  k("supabase-pat", "Supabase", "SUPABASE_ACCESS_TOKEN", "sbp_", [HEX, 40]),
  k("neon-api-key", "Neon", "NEON_API_KEY", "napi_", [LN, 64]),
  k("algolia-admin-key", "Algolia", "ALGOLIA_ADMIN_KEY", [HEX, 32]),
  k("prefect-api-key", "Prefect", "PREFECT_API_KEY", "pnu_", [AN, 36]),
  k("maxmind-license-key", "MaxMind", "MAXMIND_LICENSE_KEY", [AN, 6], "_", [AN, 29], "_mmk"),
  // messaging, email, SaaS
  k("slack-bot-token", "Slack", "SLACK_BOT_TOKEN", "xoxb-", [DI, 12], "-", [DI, 13], "-", [AN, 24]),
  k("slack-user-token", "Slack", "SLACK_USER_TOKEN", "xoxp-", [DI, 12], "-", [DI, 12], "-", [DI, 13], "-", [HEX, 32]),
  k("slack-app-token", "Slack", "SLACK_APP_TOKEN", "xapp-1-A", [UN, 10], "-", [DI, 13], "-", [HEX, 64]),
  ks("slack-webhook", "Slack", "SLACK_WEBHOOK_URL", [1, 6], "https://hooks.slack.com/", "services/T", [UN, 10], "/B", [UN, 10], "/", [AN, 24]),
  ks("teams-webhook", "Microsoft Teams", "TEAMS_WEBHOOK_URL", [1, 22], "https://contoso.webhook.office.com/webhookb2/", [HEX, 8], "-", [HEX, 4], "-", [HEX, 4], "-", [HEX, 4], "-", [HEX, 12], "@", [HEX, 8], "-", [HEX, 4], "-", [HEX, 4], "-", [HEX, 4], "-", [HEX, 12], "/IncomingWebhook/", [HEX, 32], "/", [HEX, 8], "-", [HEX, 4], "-", [HEX, 4]),
  ks("discord-webhook", "Discord", "DISCORD_WEBHOOK_URL", [3, 4], "https://discord.com/api/webhooks/", [DI, 18], "/", [U64, 68]),
  ks("telegram-bot-url", "Telegram", "TELEGRAM_API", [1, 4], "https://api.telegram.org/bot", [DI, 10], ":AA", [U64, 33], "/getMe"),
  k("telegram-bot-token", "Telegram", "TELEGRAM_BOT_TOKEN", [DI, 10], ":AA", [U64, 33]),
  k("twilio-auth-token", "Twilio", "TWILIO_AUTH_TOKEN", [HEX, 32]),
  k("sendgrid-api-key", "SendGrid", "SENDGRID_API_KEY", "SG.", [U64, 22], ".", [U64, 43]),
  k("mailgun-api-key", "Mailgun", "MAILGUN_API_KEY", "key-", [HEX, 32]),
  k("mailchimp-api-key", "Mailchimp", "MAILCHIMP_API_KEY", [HEX, 32], "-us21"),
  k("brevo-api-key", "Brevo", "BREVO_API_KEY", "xkeysib-", [HEX, 64], "-", [AN, 16]),
  k("resend-api-key", "Resend", "RESEND_API_KEY", "re_", [AN, 8], "_", [AN, 24]),
  k("postman-api-key", "Postman", "POSTMAN_API_KEY", "PMAK-", [HEX, 24], "-", [HEX, 34]),
  k("linear-api-key", "Linear", "LINEAR_API_KEY", "lin_api_", [AN, 40]),
  k("notion-token", "Notion", "NOTION_TOKEN", "ntn_", [DI, 11], [AN, 35]),
  k("figma-pat", "Figma", "FIGMA_TOKEN", "figd_", [U64, 40]),
  k("hubspot-private-app", "HubSpot", "HUBSPOT_ACCESS_TOKEN", "pat-na1-", ...uuid),
  k("contentful-pat", "Contentful", "CONTENTFUL_MANAGEMENT_TOKEN", "CFPAT-", [U64, 43]),
  k("typeform-token", "Typeform", "TYPEFORM_TOKEN", "tfp_", [U64, 59]),
  k("readme-api-key", "ReadMe", "README_API_KEY", "rdme_", [LN, 70]),
  k("frameio-token", "Frame.io", "FRAMEIO_TOKEN", "fio-u-", [U64, 64]),
  k("adobe-client-secret", "Adobe", "ADOBE_CLIENT_SECRET", "p8e-", [AN, 32]),
  k("shopify-access-token", "Shopify", "SHOPIFY_ACCESS_TOKEN", "shpat_", [HEX, 32]),
  k("shopify-shared-secret", "Shopify", "SHOPIFY_API_SECRET", "shpss_", [HEX, 32]),
  k("stripe-secret-key", "Stripe", "STRIPE_SECRET_KEY", "sk_live_", [AN, 24, 99]),
  k("stripe-restricted-key", "Stripe", "STRIPE_RESTRICTED_KEY", "rk_live_", [AN, 24, 99]),
  k("stripe-webhook-secret", "Stripe", "STRIPE_WEBHOOK_SECRET", "whsec_", [AN, 32]),
  k("square-access-token", "Square", "SQUARE_ACCESS_TOKEN", "EAAA", [U64, 60]),
  k("square-oauth-secret", "Square", "SQUARE_APPLICATION_SECRET", "sq0csp-", [U64, 43]),
  k("shippo-token", "Shippo", "SHIPPO_API_TOKEN", "shippo_live_", [HEX, 40]),
  k("easypost-key", "EasyPost", "EASYPOST_API_KEY", "EZAK", [AN, 54]),
  k("duffel-token", "Duffel", "DUFFEL_ACCESS_TOKEN", "duffel_live_", [U64, 43]),
  k("flutterwave-secret", "Flutterwave", "FLW_SECRET_KEY", "FLWSECK_TEST-", ["abcdefgh" + DI, 32], "-X"),
  k("facebook-access-token", "Facebook", "FACEBOOK_ACCESS_TOKEN", "EAAG", [AN, 150, 200]),
  k("twitter-bearer-token", "X", "TWITTER_BEARER_TOKEN", "AAAAAAAAAAAAAAAAAAAAA", [AN + "%", 80, 100]),
  k("intra42-secret", "42 Intra", "INTRA_CLIENT_SECRET", "s-s4t2ud-", [HEX, 64]),
  k("settlemint-pat", "SettleMint", "SETTLEMINT_PAT", "sm_pat_", [AN, 16]),
  // generic credentials
  ks("postgres-url-password", "Postgres", "DATABASE_URL", [1, 2], "postgres://app_user:", [AN, 18], "@db.prod.internal:5432/app"),
  ks("mongodb-url-password", "MongoDB", "MONGODB_URI", [1, 2], "mongodb+srv://svc:", [AN, 20], "@cluster0.ab1cd.mongodb.net/prod?retryWrites=true"),
  ks("redis-url-password", "Redis", "REDIS_URL", [1, 2], "rediss://default:", [AN, 24], "@cache.prod.internal:6380/0"),
  k("basic-auth-creds", "the CI server", "CURL_CREDS", "deploy:", [PW, 16, 22]),
  k("db-password", "the database", "DB_PASSWORD", [PW, 14, 24]),
  k("session-secret", "the web app", "SESSION_SECRET", [AN, 48, 64]),
  k("jwt-signing-secret", "the auth service", "JWT_SECRET", [B64, 44]),
  k("hmac-webhook-secret", "the webhook", "WEBHOOK_SECRET", [HEX, 64]),
];

/** A fake secret from parts. */
function build(parts: readonly Part[], r: () => number): string[] {
  return parts.map((p) => {
    if (typeof p === "string") return p;
    const n = p.length === 3 ? p[1] + Math.floor(r() * (p[2]! - p[1] + 1)) : p[1];
    let s = "";
    for (let i = 0; i < n; i++) s += p[0][Math.floor(r() * p[0].length)]!;
    return s;
  });
}

const S = "\uE000";
const E = "\uE001";

/** The token with its secret marked. */
function marked(kd: Kind, r: () => number): { token: string; secret: string } {
  const pieces = build(kd.parts, r);
  const [a, b] = kd.secretParts ?? [0, pieces.length];
  const token = pieces.slice(0, a).join("") + S + pieces.slice(a, b).join("") + E + pieces.slice(b).join("");
  return { token, secret: pieces.slice(a, b).join("") };
}

const lower = (env: string) => env.toLowerCase();
const camel = (env: string) => env.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const pick = <T>(xs: ArrayLike<T>, r: () => number): T => xs[Math.floor(r() * xs.length)]!;

/** Phrasings per location: `t` is the marked token, `kd` the kind. */
const PROSE: ((t: string, kd: Kind) => string)[] = [
  (t, kd) => `here's my ${kd.vendor} key: ${t}`,
  (t, kd) => `The ${kd.vendor} token is ${t} — it expires at the end of the month.`,
  (t) => `I set the API key to ${t} in the dashboard, so the deploy should work now.`,
  (t) => `Use this secret: ${t}`,
  (t, kd) => `${kd.vendor} credentials → ${t}`,
  (t, kd) => `Found it: the ${kd.vendor} secret key is ${t}. Want me to rotate it?`,
  (t) => `the password is ${t} (don't share it)`,
  (t, kd) => `I generated a new ${kd.vendor} access token ${t} and saved it to the vault.`,
];
const COMMAND: ((t: string, kd: Kind) => string)[] = [
  (t, kd) => `export ${kd.env}=${t}`,
  (t, kd) => `${kd.env}='${t}' pnpm run deploy --filter api`,
  (t, kd) => `docker run --rm -e ${kd.env}="${t}" ghcr.io/acme/worker:2.3.1`,
  (t, kd) => `gh secret set ${kd.env} --body '${t}'`,
  (t, kd) => `echo "${kd.env}=${t}" >> .env && source .env`,
  (t, kd) => `kubectl create secret generic app-secrets --from-literal=${lower(kd.env)}=${t}`,
];
const TOOL_OUTPUT: ((t: string, kd: Kind) => string)[] = [
  (t, kd) => `$ printenv | sort\nHOME=/home/dev\nLANG=C.UTF-8\n${kd.env}=${t}\nPATH=/usr/local/bin:/usr/bin\n`,
  (t, kd) => `{"status":"ok","config":{"region":"eu-west-1","${camel(kd.env)}":"${t}","retries":3}}`,
  (t, kd) => `2026-11-30T10:12:03Z INFO loaded settings: ${lower(kd.env)}=${t} timeout=30s`,
  (t, kd) => `   ${kd.env}: ${t}\n   NODE_ENV: production\n`,
];
const FILE_CONTENT: ((t: string, kd: Kind) => string)[] = [
  (t, kd) => `# production\nNODE_ENV=production\nPORT=8080\n${kd.env}=${t}\nLOG_LEVEL=info\n`,
  (t, kd) => `services:\n  api:\n    environment:\n      ${kd.env}: "${t}"\n      PORT: "8080"\n`,
  (t, kd) => `[default]\nregion = "eu-west-1"\n${lower(kd.env)} = "${t}"\n`,
  (t, kd) => `{\n  "name": "worker",\n  "${camel(kd.env)}": "${t}",\n  "timeoutMs": 30000\n}\n`,
  (t, kd) => `const config = {\n  region: "eu-west-1",\n  ${camel(kd.env)}: "${t}",\n};\nexport default config;\n`,
  (t, kd) => `import os\n\nos.environ.setdefault("${kd.env}", "${t}")\n`,
];
const PHRASES: Record<Location, ((t: string, kd: Kind) => string)[]> = { prose: PROSE, command: COMMAND, "tool-output": TOOL_OUTPUT, "file-content": FILE_CONTENT };

/** Wrap a text as a real record line of the location (Claude Code or Codex shapes, as on disk). */
function recordLine(location: Location, text: string, r: () => number, runtime: "claude-code" | "codex"): string {
  const id = () => Array.from({ length: 24 }, () => pick(AN, r)).join("");
  const ts = "2026-11-30T10:12:03.120Z";
  if (runtime === "codex") {
    if (location === "prose") return JSON.stringify({ timestamp: ts, type: "response_item", payload: { type: "message", role: "assistant", content: [{ type: "output_text", text }] } });
    if (location === "command") return JSON.stringify({ timestamp: ts, type: "response_item", payload: { type: "function_call", name: "shell", arguments: JSON.stringify({ command: ["bash", "-lc", text], workdir: "/home/dev/app" }), call_id: "call_" + id() } });
    if (location === "tool-output") return JSON.stringify({ timestamp: ts, type: "response_item", payload: { type: "function_call_output", call_id: "call_" + id(), output: JSON.stringify({ output: text, metadata: { exit_code: 0, duration_seconds: 0.2 } }) } });
    return JSON.stringify({ timestamp: ts, type: "response_item", payload: { type: "custom_tool_call", name: "apply_patch", input: `*** Begin Patch\n*** Add File: config/app.env\n${text.split("\n").map((l) => "+" + l).join("\n")}\n*** End Patch`, call_id: "call_" + id() } });
  }
  const base = { parentUuid: "3c0f6a3e-5d1b-4c39-9e0e-2b8f4f7e9a10", isSidechain: false, userType: "external", cwd: "/home/dev/app", sessionId: "8d2f0b7c-1a2b-4c3d-9e8f-0a1b2c3d4e5f", version: "2.1.38", gitBranch: "main", timestamp: ts };
  if (location === "prose") return JSON.stringify({ ...base, type: "assistant", message: { id: "msg_" + id(), type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "text", text }] } });
  if (location === "command") return JSON.stringify({ ...base, type: "assistant", message: { id: "msg_" + id(), role: "assistant", content: [{ type: "tool_use", id: "toolu_" + id(), name: "Bash", input: { command: text, description: "Run the deploy step" } }] } });
  if (location === "tool-output") return JSON.stringify({ ...base, type: "user", message: { role: "user", content: [{ tool_use_id: "toolu_" + id(), type: "tool_result", content: text, is_error: false }] } });
  return JSON.stringify({ ...base, type: "assistant", message: { id: "msg_" + id(), role: "assistant", content: [{ type: "tool_use", id: "toolu_" + id(), name: "Write", input: { file_path: "/home/dev/app/config/app.env", content: text } }] } });
}

function unmark(text: string): { text: string; labels: { start: number; end: number }[] } {
  let out = "";
  const labels: { start: number; end: number }[] = [];
  let open = -1;
  for (const c of text) {
    if (c === S) open = out.length;
    else if (c === E) {
      labels.push({ start: open, end: out.length });
      open = -1;
    } else out += c;
  }
  return { text: out, labels };
}

/** Non-secrets that look like secrets: every one must come out unmasked. */
export function baitTexts(r: () => number): { what: string; text: string }[] {
  const hex = (n: number) => Array.from({ length: n }, () => pick(HEX, r)).join("");
  const b64 = (n: number) => Array.from({ length: n }, () => pick(B64, r)).join("");
  const u = () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
  const aws = ["AKIA", "IOSFODNN7EXAMPLE"].join("");
  const awsSecret = ["wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY"].join("");
  return [
    { what: "git-sha", text: `commit ${hex(40)}\nAuthor: Dev <dev@example.test>\nDate:   Mon Nov 30 10:12:03 2026\n\n    fix: token refresh\n` },
    { what: "git-sha", text: `the fix landed in ${hex(40)} (key change: the secret is read lazily)` },
    { what: "git-sha", text: `git checkout ${hex(40)} && git log --oneline -3\n${hex(7)} bump key rotation docs` },
    { what: "npm-integrity", text: `"node_modules/jose": {\n  "version": "5.9.6",\n  "resolved": "https://registry.npmjs.org/jose/-/jose-5.9.6.tgz",\n  "integrity": "sha512-${b64(86)}=="\n}` },
    { what: "npm-integrity", text: `jose@5.9.6:\n  resolution: {integrity: sha512-${b64(86)}==}\n  engines: {node: '>=18'}` },
    { what: "image-digest", text: `docker pull ghcr.io/acme/api@sha256:${hex(64)}` },
    { what: "image-digest", text: `image: registry.example.test/auth-token-service@sha256:${hex(64)}\nimagePullPolicy: IfNotPresent` },
    { what: "base64-png", text: `data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA${b64(1500)}=` },
    { what: "base64-png", text: JSON.stringify({ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo" + b64(2000) } }) },
    { what: "ssh-public-key", text: `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${b64(43)} dev@laptop` },
    { what: "ssh-public-key", text: `~/.ssh/authorized_keys:\nssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ${b64(540)}= ci@runner\n` },
    { what: "aws-doc-example", text: `aws_access_key_id = ${aws}\naws_secret_access_key = ${awsSecret}` },
    { what: "aws-doc-example", text: `export AWS_ACCESS_KEY_ID=${aws}\nexport AWS_SECRET_ACCESS_KEY=${awsSecret}` },
    { what: "placeholder", text: "export GITHUB_TOKEN=${GITHUB_TOKEN}\nexport OPENAI_API_KEY=\"${OPENAI_API_KEY}\"\nDD_APP_KEY=${DD_APP_KEY}" },
    { what: "placeholder", text: "curl -H \"Authorization: Bearer ${API_TOKEN}\" \"https://api.example.test/v1?token=${TOKEN}\"" },
    { what: "placeholder", text: "password: ${DB_PASSWORD}\napi_key: \"{{ secrets.API_KEY }}\"\ntoken: <your-token-here>" },
    { what: "uuid", text: `{"sessionId":"${u()}","requestId":"req_011${hex(21)}","api_key_id":"${u()}"}` },
    { what: "uuid", text: `session ${u()} resumed; the cache key is ${u()}` },
    { what: "prose", text: "The key insight: tokens are counted per request, so max_tokens=32000 and the token budget is 200000." },
    { what: "prose", text: "Rotate the secret key every 90 days; the password policy needs 12+ characters and a symbol." },
    { what: "checksum", text: `${hex(64)}  lake-linux-x64.tar.gz\n${hex(64)}  lake-darwin-arm64.tar.gz` },
    { what: "go-sum", text: `golang.org/x/crypto v0.31.0 h1:${b64(43)}=\ngolang.org/x/crypto v0.31.0/go.mod h1:${b64(43)}=` },
  ];
}

/** Build the format corpus: every kind in every location `variants` times (alternating Claude Code and Codex lines), then the bait. */
export function generateFormatCorpus(seed = 1, variants = 3): FormatItem[] {
  const r = prng(seed);
  const items: FormatItem[] = [];
  for (const kd of KINDS) {
    for (const location of LOCATIONS) {
      const phrases = PHRASES[location];
      for (let v = 0; v < variants; v++) {
        const { token } = marked(kd, r);
        const phrase = phrases[(v * 7 + kd.kind.length) % phrases.length]!;
        const runtime = v % 2 === 0 ? "claude-code" : "codex";
        const { text, labels } = unmark(recordLine(location, phrase(token, kd), r, runtime));
        items.push({ id: `${kd.kind}/${location}/${v}`, kind: kd.kind, location, text, labels });
      }
    }
  }
  for (let v = 0; v < variants; v++) {
    for (const b of baitTexts(r)) {
      const location = LOCATIONS[(items.length + v) % LOCATIONS.length]!;
      const runtime = v % 2 === 0 ? "claude-code" : "codex";
      items.push({ id: `bait/${b.what}/${items.length}`, kind: `bait:${b.what}`, location, text: recordLine(location, b.text, r, runtime), labels: [] });
    }
  }
  return items;
}

/** Counts for precision/recall. */
export interface FormatCounts {
  labels: number;
  found: number;
  findings: number;
  falsePositives: number;
}

export interface FormatScore {
  readonly overall: FormatCounts;
  readonly byKind: Map<string, FormatCounts>;
  readonly byLocation: Map<Location, FormatCounts>;
  readonly misses: { id: string; excerpt: string }[];
  readonly falsePositives: { id: string; rule: string; excerpt: string }[];
}

export const formatPrecision = (c: FormatCounts) => (c.findings === 0 ? 1 : (c.findings - c.falsePositives) / c.findings);
export const formatRecall = (c: FormatCounts) => (c.labels === 0 ? 1 : c.found / c.labels);

/** Score a masking function on the corpus: a label is found when one finding covers it; a finding overlapping no label is a false positive. */
export function scoreFormats(findingsOf: (text: string) => readonly { rule: string; start: number; end: number }[], items: readonly FormatItem[]): FormatScore {
  const zero = (): FormatCounts => ({ labels: 0, found: 0, findings: 0, falsePositives: 0 });
  const overall = zero();
  const byKind = new Map<string, FormatCounts>();
  const byLocation = new Map<Location, FormatCounts>();
  const misses: FormatScore["misses"] = [];
  const falsePositives: FormatScore["falsePositives"] = [];
  for (const it of items) {
    const fs = findingsOf(it.text);
    const kc = byKind.get(it.kind) ?? zero();
    byKind.set(it.kind, kc);
    const lc = byLocation.get(it.location) ?? zero();
    byLocation.set(it.location, lc);
    for (const c of [overall, kc, lc]) c.labels += it.labels.length;
    for (const l of it.labels) {
      if (fs.some((f) => f.start <= l.start && f.end >= l.end)) for (const c of [overall, kc, lc]) c.found++;
      else misses.push({ id: it.id, excerpt: it.text.slice(Math.max(0, l.start - 70), l.end + 10) });
    }
    for (const f of fs) {
      for (const c of [overall, kc, lc]) c.findings++;
      if (!it.labels.some((l) => f.start < l.end && l.start < f.end)) {
        for (const c of [overall, kc, lc]) c.falsePositives++;
        falsePositives.push({ id: it.id, rule: f.rule, excerpt: it.text.slice(Math.max(0, f.start - 50), f.end + 10) });
      }
    }
  }
  return { overall, byKind, byLocation, misses, falsePositives };
}
