// Vendor token formats that carry their own distinctive shape (a prefix, a charset, a length), so
// they are found anywhere — in prose, commands, tool output, files — with no secret-sounding name
// next to them. The formats are public facts (vendors' documentation, and the widely used public
// rule sets: gitleaks' config, trufflehog's detectors); the rules below are lake's own. Each entry
// is data: the token pattern, the prefilter keywords, the minimum entropy, and a sample shape from
// which the inline examples and the generic negatives (a low-entropy body, a cut body, the prefix
// inside a longer word) are built at load time.
import { ALPHABETS as A, cat, fake } from "./fake.js";

/** A part of a sample token: literal text, or `[alphabet, length]` of random characters. */
export type ShapePart = string | readonly [string, number];

/** One vendor format. */
export interface VendorFormat {
  readonly id: string;
  readonly description: string;
  /** Prefilter keywords (case-insensitive); every match contains one. */
  readonly keywords: readonly string[];
  /** The token, without boundaries (the table adds them). */
  readonly token: string;
  /** Minimum Shannon entropy of the token (default 3.0). */
  readonly entropy?: number;
  /** What may not sit right before the token (default: an identifier character), as a look-behind. */
  readonly lookbehind?: string;
  /** Regex flags (`i` where the vendor's charset is case-insensitive). */
  readonly flags?: string;
  /** A sample token: literal prefix parts and random bodies. */
  readonly shape: readonly ShapePart[];
  /** An environment variable name the token is usually assigned to (examples). */
  readonly env: string;
  /** Extra texts in which the rule must find a secret. */
  readonly examples?: readonly string[];
  /** Extra texts in which the rule must find nothing. */
  readonly negatives?: readonly string[];
  /** False when a low-entropy copy of the sample still holds enough literal text to pass (URLs). */
  readonly lowEntropyNegative?: boolean;
}

const H = A.hex;
const AN = A.alnum;
const LN = A.lower + A.digits;
const UN = A.upper + A.digits;
const U64 = A.base64url;
const B64 = A.base64;

/** The vendor formats, most specific first. */
export const VENDOR_FORMATS: readonly VendorFormat[] = [
  { id: "1password-service-account-token", description: "1Password service account token (ops_eyJ…)", keywords: ["ops_eyj"], token: "ops_eyJ[A-Za-z0-9+/]{250,1000}={0,3}", entropy: 4, shape: ["ops_eyJ", [B64, 300]], env: "OP_SERVICE_ACCOUNT_TOKEN" },
  { id: "1password-secret-key", description: "1Password account secret key (A3-XXXXXX-…)", keywords: ["a3-"], token: "A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}", entropy: 3.5, shape: ["A3-", [UN, 6], "-", [UN, 11], "-", [UN, 5], "-", [UN, 5], "-", [UN, 5]], env: "OP_SECRET_KEY" },
  { id: "age-secret-key", description: "age encryption secret key (AGE-SECRET-KEY-1…, bech32)", keywords: ["age-secret-key-1"], token: "AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", entropy: 3.5, shape: ["AGE-SECRET-KEY-1", ["QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58]], env: "SOPS_AGE_KEY" },
  { id: "adobe-client-secret", description: "Adobe OAuth client secret (p8e-)", keywords: ["p8e-"], token: "p8e-[A-Za-z0-9]{32}", shape: ["p8e-", [AN, 32]], env: "ADOBE_CLIENT_SECRET" },
  { id: "airtable-pat", description: "Airtable personal access token (pat….<64 hex>)", keywords: ["pat"], token: "pat[A-Za-z0-9]{14}\\.[a-f0-9]{64}", shape: ["pat", [AN, 14], ".", [H, 64]], env: "AIRTABLE_TOKEN" },
  { id: "alibaba-access-key-id", description: "Alibaba Cloud AccessKey ID (LTAI + 20)", keywords: ["ltai"], token: "LTAI[A-Za-z0-9]{12,20}", entropy: 3.2, shape: ["LTAI", [AN, 20]], env: "ALIBABA_CLOUD_ACCESS_KEY_ID" },
  { id: "artifactory-api-key", description: "JFrog Artifactory API key (AKCp + 69)", keywords: ["akcp"], token: "AKCp[A-Za-z0-9]{69}", entropy: 4, shape: ["AKCp", [AN, 69]], env: "ARTIFACTORY_API_KEY" },
  { id: "artifactory-reference-token", description: "JFrog Artifactory reference token (cmVmd…)", keywords: ["cmvmd"], token: "cmVmd[A-Za-z0-9]{59}", entropy: 4, shape: ["cmVmd", [AN, 59]], env: "JFROG_ACCESS_TOKEN" },
  { id: "atlassian-api-token", description: "Atlassian API token (ATATT3…)", keywords: ["atatt3"], token: "ATATT3[A-Za-z0-9_=-]{180,200}", entropy: 4, shape: ["ATATT3", [U64, 186]], env: "JIRA_API_TOKEN" },
  { id: "aws-bedrock-api-key", description: "Amazon Bedrock long-lived API key (ABSK…)", keywords: ["absk"], token: "ABSK[A-Za-z0-9+/]{109,269}={0,2}", entropy: 4, shape: ["ABSK", [B64, 132]], env: "AWS_BEARER_TOKEN_BEDROCK" },
  { id: "azure-ad-client-secret", description: "Azure AD (Entra) client secret (…8Q~…)", keywords: ["q~"], token: "[A-Za-z0-9_~.]{3}\\dQ~[A-Za-z0-9_~.-]{31,34}", entropy: 3.5, shape: [[AN, 3], "8Q~", [AN + "_~.-", 34]], env: "AZURE_CLIENT_SECRET" },
  { id: "clickhouse-cloud-api-secret", description: "ClickHouse Cloud API secret (4b1d + 38)", keywords: ["4b1d"], token: "4b1d[A-Za-z0-9]{38}", entropy: 3.5, shape: ["4b1d", [AN, 38]], env: "CLICKHOUSE_SECRET" },
  { id: "clojars-api-token", description: "Clojars deploy token (CLOJARS_ + 60)", keywords: ["clojars_"], token: "CLOJARS_[a-z0-9]{60}", flags: "i", shape: ["CLOJARS_", [LN, 60]], env: "CLOJARS_TOKEN" },
  { id: "cloudflare-origin-ca-key", description: "Cloudflare Origin CA key (v1.0-<24 hex>-<146 hex>)", keywords: ["v1.0-"], token: "v1\\.0-[a-f0-9]{24}-[a-f0-9]{146}", shape: ["v1.0-", [H, 24], "-", [H, 146]], env: "CF_ORIGIN_CA_KEY" },
  { id: "databricks-token", description: "Databricks personal access token (dapi + 32 hex) and OAuth secret (dose + 32 hex)", keywords: ["dapi", "dose"], token: "(?:dapi|dose)[a-f0-9]{32}(?:-\\d)?", shape: ["dapi", [H, 32]], env: "DATABRICKS_TOKEN" },
  { id: "digitalocean-token", description: "DigitalOcean tokens: personal (dop_v1_), OAuth (doo_v1_), refresh (dor_v1_)", keywords: ["dop_v1_", "doo_v1_", "dor_v1_"], token: "do[por]_v1_[a-f0-9]{64}", shape: ["dop_v1_", [H, 64]], env: "DIGITALOCEAN_TOKEN" },
  { id: "discord-webhook", description: "Discord webhook URL (the token part of /api/webhooks/<id>/<token>)", keywords: ["discord.com/api/webhooks/", "discordapp.com/api/webhooks/"], token: "https://(?:ptb\\.|canary\\.)?discord(?:app)?\\.com/api/webhooks/\\d{17,20}/(?<s>[A-Za-z0-9_-]{60,72})", shape: ["https://discord.com/api/webhooks/", [A.digits, 18], "/", [U64, 68]], env: "DISCORD_WEBHOOK_URL" },
  { id: "docker-pat", description: "Docker Hub personal access token (dckr_pat_) and org token (dckr_oat_)", keywords: ["dckr_pat_", "dckr_oat_"], token: "dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,40}", shape: ["dckr_pat_", [U64, 27]], env: "DOCKERHUB_TOKEN" },
  { id: "doppler-token", description: "Doppler tokens (dp.pt., dp.st., dp.ct., dp.sa., dp.scim., dp.audit.)", keywords: ["dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim.", "dp.audit."], token: "dp\\.(?:pt|st|ct|sa|scim|audit)\\.[A-Za-z0-9]{40,44}", shape: ["dp.pt.", [AN, 43]], env: "DOPPLER_TOKEN" },
  { id: "duffel-api-token", description: "Duffel API token (duffel_test_ / duffel_live_)", keywords: ["duffel_"], token: "duffel_(?:test|live)_[A-Za-z0-9_=-]{43}", shape: ["duffel_live_", [U64, 43]], env: "DUFFEL_TOKEN" },
  { id: "dynatrace-api-token", description: "Dynatrace API token (dt0c01.<24>.<64>)", keywords: ["dt0c01."], token: "dt0c01\\.[A-Za-z0-9]{24}\\.[A-Za-z0-9]{64}", shape: ["dt0c01.", [UN, 24], ".", [UN, 64]], env: "DT_API_TOKEN" },
  { id: "easypost-api-key", description: "EasyPost API key (EZAK / EZTK + 54)", keywords: ["ezak", "eztk"], token: "EZ[AT]K[A-Za-z0-9]{54}", shape: ["EZAK", [AN, 54]], env: "EASYPOST_API_KEY" },
  { id: "facebook-access-token", description: "Facebook / Meta access token (EAAC…, EAAM…, EAAG…)", keywords: ["eaac", "eaam", "eaag", "eaab"], token: "EAA[BCGM][A-Za-z0-9]{100,400}", entropy: 4, shape: ["EAAG", [AN, 160]], env: "FACEBOOK_ACCESS_TOKEN" },
  { id: "figma-token", description: "Figma personal access token (figd_)", keywords: ["figd_"], token: "figd_[A-Za-z0-9_-]{40,43}", shape: ["figd_", [U64, 40]], env: "FIGMA_TOKEN" },
  { id: "flutterwave-key", description: "Flutterwave keys (FLWSECK-, FLWSECK_TEST-, FLWPUBK_TEST-)", keywords: ["flwseck", "flwpubk"], token: "FLW(?:SEC|PUB)K(?:_TEST)?-[a-h0-9]{12,32}(?:-X)?", entropy: 3, shape: ["FLWSECK_TEST-", ["abcdefgh0123456789", 32], "-X"], env: "FLW_SECRET_KEY" },
  { id: "flyio-token", description: "Fly.io tokens (fo1_, fm1a_, fm1r_, fm2_)", keywords: ["fo1_", "fm1a_", "fm1r_", "fm2_"], token: "(?:fo1_[A-Za-z0-9_-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,2000}={0,3}|fm2_[A-Za-z0-9+/]{100,2000}={0,3})", entropy: 4, shape: ["fo1_", [U64, 43]], env: "FLY_API_TOKEN" },
  { id: "frameio-api-token", description: "Frame.io developer token (fio-u-)", keywords: ["fio-u-"], token: "fio-u-[A-Za-z0-9_=-]{64}", shape: ["fio-u-", [U64, 64]], env: "FRAMEIO_TOKEN" },
  { id: "google-oauth-secret", description: "Google OAuth client secret (GOCSPX-)", keywords: ["gocspx-"], token: "GOCSPX-[A-Za-z0-9_-]{28}", shape: ["GOCSPX-", [U64, 28]], env: "GOOGLE_CLIENT_SECRET" },
  { id: "google-oauth-token", description: "Google OAuth access token (ya29.) and refresh token (1//0…)", keywords: ["ya29.", "1//0"], token: "(?:ya29\\.[A-Za-z0-9_-]{50,2000}|1//0[A-Za-z0-9_-]{40,300})", entropy: 3.5, shape: ["ya29.a0", [U64, 150]], env: "GOOGLE_ACCESS_TOKEN" },
  { id: "grafana-token", description: "Grafana tokens: service account (glsa_), cloud (glc_), legacy API key (eyJrIjoi…)", keywords: ["glsa_", "glc_", "eyjrijoi"], token: "(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,3}|eyJrIjoi[A-Za-z0-9]{70,400}={0,3})", shape: ["glsa_", [AN, 32], "_", [H, 8]], env: "GRAFANA_TOKEN" },
  { id: "groq-api-key", description: "Groq API key (gsk_ + 52)", keywords: ["gsk_"], token: "gsk_[A-Za-z0-9]{52}", shape: ["gsk_", [AN, 52]], env: "GROQ_API_KEY" },
  { id: "harness-token", description: "Harness personal / service account token (pat.<22>.<24>.<20>, sat.…)", keywords: ["pat.", "sat."], token: "(?:pat|sat)\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9]{24}\\.[A-Za-z0-9]{20}", shape: ["pat.", [U64, 22], ".", [AN, 24], ".", [AN, 20]], env: "HARNESS_TOKEN" },
  { id: "heroku-api-key", description: "Heroku API key v2 (HRKU-AA…)", keywords: ["hrku-"], token: "HRKU-AA[A-Za-z0-9_-]{58}", shape: ["HRKU-AA", [U64, 58]], env: "HEROKU_API_KEY" },
  { id: "hubspot-token", description: "HubSpot private app token (pat-na1-<uuid>, pat-eu1-…)", keywords: ["pat-na", "pat-eu", "pat-ap"], token: "pat-(?:na|eu|ap)\\d-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}", shape: ["pat-na1-", [H, 8], "-", [H, 4], "-", [H, 4], "-", [H, 4], "-", [H, 12]], env: "HUBSPOT_TOKEN" },
  { id: "infracost-api-token", description: "Infracost API token (ico- + 32)", keywords: ["ico-"], token: "ico-[A-Za-z0-9]{32}", shape: ["ico-", [AN, 32]], env: "INFRACOST_API_KEY" },
  { id: "intra42-client-secret", description: "42 Intra client secret (s-s4t2ud- / s-s4t2af- + 64 hex)", keywords: ["s-s4t2ud-", "s-s4t2af-"], token: "s-s4t2(?:ud|af)-[a-f0-9]{64}", shape: ["s-s4t2ud-", [H, 64]], env: "INTRA_CLIENT_SECRET" },
  { id: "langsmith-api-key", description: "LangSmith API key (lsv2_pt_ / lsv2_sk_ + 32 hex + _ + 10 hex)", keywords: ["lsv2_"], token: "lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", shape: ["lsv2_pt_", [H, 32], "_", [H, 10]], env: "LANGSMITH_API_KEY" },
  { id: "linear-api-key", description: "Linear API key (lin_api_ + 40) and OAuth token (lin_oauth_)", keywords: ["lin_api_", "lin_oauth_"], token: "lin_(?:api|oauth)_[A-Za-z0-9]{40,64}", shape: ["lin_api_", [AN, 40]], env: "LINEAR_API_KEY" },
  { id: "mailchimp-api-key", description: "Mailchimp API key (32 hex + -us<dc>)", keywords: ["-us"], token: "[a-f0-9]{32}-us\\d{1,2}", shape: [[H, 32], "-us14"], env: "MAILCHIMP_API_KEY" },
  { id: "mailgun-key", description: "Mailgun private key (key- + 32 hex)", keywords: ["key-"], token: "key-[a-f0-9]{32}", entropy: 3.3, shape: ["key-", [H, 32]], env: "MAILGUN_API_KEY" },
  { id: "mapbox-secret-token", description: "Mapbox secret token (sk.eyJ…)", keywords: ["sk.eyj"], token: "sk\\.eyJ[A-Za-z0-9_-]{20,200}\\.[A-Za-z0-9_-]{20,60}", shape: ["sk.eyJ1IjoiZGV2IiwiYSI6I", [U64, 20], ".", [U64, 22]], env: "MAPBOX_SECRET_TOKEN" },
  { id: "maxmind-license-key", description: "MaxMind license key (<6>_<29>_mmk)", keywords: ["_mmk"], token: "[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk", shape: [[AN, 6], "_", [AN, 29], "_mmk"], env: "MAXMIND_LICENSE_KEY" },
  { id: "microsoft-teams-webhook", description: "Microsoft Teams / Power Automate incoming webhook URL (the path is masked)", keywords: ["webhook.office.com", "logic.azure.com", "powerautomate"], token: "https://(?:[a-z0-9-]+\\.webhook\\.office\\.com/(?<s>webhookb2/[A-Za-z0-9@/_-]{60,300})|[a-z0-9.-]+\\.logic\\.azure\\.com(?::443)?/(?<s2>workflows/[A-Za-z0-9/?&=%._-]{40,400}))", shape: ["https://contoso.webhook.office.com/webhookb2/", [H, 8], "-", [H, 4], "-", [H, 4], "-", [H, 4], "-", [H, 12], "@", [H, 8], "-", [H, 4], "-", [H, 4], "-", [H, 4], "-", [H, 12], "/IncomingWebhook/", [H, 32], "/", [H, 8], "-", [H, 4], "-", [H, 4], "-", [H, 4], "-", [H, 12]], env: "TEAMS_WEBHOOK_URL", lowEntropyNegative: false },
  { id: "new-relic-key", description: "New Relic keys (NRAK-, NRII-, NRJS-, NRAA-)", keywords: ["nrak-", "nrii-", "nrjs-", "nraa-"], token: "NR(?:AK-[A-Z0-9]{27}|II-[A-Za-z0-9_-]{32}|JS-[a-f0-9]{19}|AA-[a-f0-9]{27})", shape: ["NRAK-", [UN, 27]], env: "NEW_RELIC_API_KEY" },
  { id: "notion-token", description: "Notion integration token (ntn_ + 11 digits + 35, legacy secret_ + 43)", keywords: ["ntn_", "secret_"], token: "(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})", entropy: 3.5, shape: ["ntn_", [A.digits, 11], [AN, 35]], env: "NOTION_TOKEN" },
  { id: "octopus-deploy-api-key", description: "Octopus Deploy API key (API- + 26 upper/digits)", keywords: ["api-"], token: "API-[A-Z0-9]{26}", entropy: 3.5, shape: ["API-", [UN, 26]], env: "OCTOPUS_API_KEY" },
  { id: "openrouter-api-key", description: "OpenRouter API key (sk-or-v1- + 64 hex)", keywords: ["sk-or-"], token: "sk-or-v1-[a-f0-9]{64}", shape: ["sk-or-v1-", [H, 64]], env: "OPENROUTER_API_KEY" },
  { id: "openshift-token", description: "OpenShift user token (sha256~ + 43)", keywords: ["sha256~"], token: "sha256~[A-Za-z0-9_-]{43}", shape: ["sha256~", [U64, 43]], env: "OPENSHIFT_TOKEN" },
  { id: "perplexity-api-key", description: "Perplexity API key (pplx- + 48)", keywords: ["pplx-"], token: "pplx-[A-Za-z0-9]{48}", shape: ["pplx-", [AN, 48]], env: "PERPLEXITY_API_KEY" },
  { id: "pinecone-api-key", description: "Pinecone API key (pcsk_)", keywords: ["pcsk_"], token: "pcsk_[A-Za-z0-9]{5,6}_[A-Za-z0-9]{60,70}", shape: ["pcsk_", [AN, 6], "_", [AN, 64]], env: "PINECONE_API_KEY" },
  { id: "planetscale-token", description: "PlanetScale tokens and passwords (pscale_tkn_, pscale_oauth_, pscale_pw_)", keywords: ["pscale_"], token: "pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}", shape: ["pscale_pw_", [U64, 43]], env: "PLANETSCALE_PASSWORD" },
  { id: "postman-api-key", description: "Postman API key (PMAK-<24 hex>-<34 hex>)", keywords: ["pmak-"], token: "PMAK-[a-f0-9]{24}-[a-f0-9]{34}", shape: ["PMAK-", [H, 24], "-", [H, 34]], env: "POSTMAN_API_KEY" },
  { id: "prefect-api-key", description: "Prefect API key (pnu_ + 36)", keywords: ["pnu_"], token: "pnu_[A-Za-z0-9]{36}", shape: ["pnu_", [AN, 36]], env: "PREFECT_API_KEY" },
  { id: "pulumi-token", description: "Pulumi access token (pul- + 40 hex)", keywords: ["pul-"], token: "pul-[a-f0-9]{40}", shape: ["pul-", [H, 40]], env: "PULUMI_ACCESS_TOKEN" },
  { id: "readme-api-key", description: "ReadMe API key (rdme_ + 70)", keywords: ["rdme_"], token: "rdme_[a-z0-9]{70}", shape: ["rdme_", [LN, 70]], env: "README_API_KEY" },
  { id: "replicate-api-token", description: "Replicate API token (r8_ + 37)", keywords: ["r8_"], token: "r8_[A-Za-z0-9]{37}", shape: ["r8_", [AN, 37]], env: "REPLICATE_API_TOKEN" },
  { id: "rubygems-api-key", description: "RubyGems API key (rubygems_ + 48 hex)", keywords: ["rubygems_"], token: "rubygems_[a-f0-9]{48}", shape: ["rubygems_", [H, 48]], env: "GEM_HOST_API_KEY" },
  { id: "scalingo-api-token", description: "Scalingo API token (tk-us- + 48)", keywords: ["tk-us-"], token: "tk-us-[A-Za-z0-9_-]{48}", shape: ["tk-us-", [U64, 48]], env: "SCALINGO_API_TOKEN" },
  { id: "sendinblue-api-key", description: "Brevo / Sendinblue API key (xkeysib-<64 hex>-<16>) and SMTP key (xsmtpsib-)", keywords: ["xkeysib-", "xsmtpsib-"], token: "x(?:key|smtp)sib-[a-f0-9]{64}-[A-Za-z0-9]{16}", shape: ["xkeysib-", [H, 64], "-", [AN, 16]], env: "BREVO_API_KEY" },
  { id: "sentry-token", description: "Sentry tokens: user auth (sntryu_ + 64 hex), org auth (sntrys_eyJ…)", keywords: ["sntryu_", "sntrys_"], token: "(?:sntryu_[a-f0-9]{64}|sntrys_eyJ[A-Za-z0-9+/=]{40,400}_[A-Za-z0-9+/]{43})", shape: ["sntryu_", [H, 64]], env: "SENTRY_AUTH_TOKEN" },
  { id: "settlemint-token", description: "SettleMint access tokens (sm_pat_, sm_aat_, sm_sat_)", keywords: ["sm_pat_", "sm_aat_", "sm_sat_"], token: "sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}", shape: ["sm_pat_", [AN, 16]], env: "SETTLEMINT_TOKEN" },
  { id: "shippo-api-token", description: "Shippo API token (shippo_live_ / shippo_test_ + 40 hex)", keywords: ["shippo_"], token: "shippo_(?:live|test)_[a-fA-F0-9]{40}", shape: ["shippo_live_", [H, 40]], env: "SHIPPO_API_TOKEN" },
  { id: "shopify-token", description: "Shopify tokens: admin (shpat_), custom app (shpca_), private app (shppa_), shared secret (shpss_)", keywords: ["shpat_", "shpca_", "shppa_", "shpss_"], token: "shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", shape: ["shpat_", [H, 32]], env: "SHOPIFY_ACCESS_TOKEN" },
  { id: "sonarqube-token", description: "SonarQube tokens (squ_, sqp_, sqa_ + 40 hex)", keywords: ["squ_", "sqp_", "sqa_"], token: "sq[upa]_[a-f0-9]{40}", shape: ["squ_", [H, 40]], env: "SONAR_TOKEN" },
  { id: "sourcegraph-token", description: "Sourcegraph access token (sgp_)", keywords: ["sgp_"], token: "sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}", shape: ["sgp_", [H, 16], "_", [H, 40]], env: "SRC_ACCESS_TOKEN" },
  { id: "square-token", description: "Square access token (EAAA…, sq0atp-) and OAuth secret (sq0csp-)", keywords: ["eaaa", "sq0atp-", "sq0csp-"], token: "(?:EAAA[A-Za-z0-9_-]{60}|sq0atp-[A-Za-z0-9_-]{22,60}|sq0csp-[A-Za-z0-9_-]{43})", entropy: 3.5, shape: ["EAAA", [U64, 60]], env: "SQUARE_ACCESS_TOKEN" },
  { id: "supabase-token", description: "Supabase personal access token (sbp_ + 40 hex) and secret key (sb_secret_)", keywords: ["sbp_", "sb_secret_"], token: "(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{31,40})", shape: ["sbp_", [H, 40]], env: "SUPABASE_ACCESS_TOKEN" },
  { id: "tailscale-key", description: "Tailscale keys (tskey-auth-, tskey-api-, tskey-client-, tskey-webhook-)", keywords: ["tskey-"], token: "tskey-(?:auth|api|client|webhook|scim)-[A-Za-z0-9]{8,20}-[A-Za-z0-9]{20,40}", shape: ["tskey-auth-", [AN, 17], "-", [AN, 33]], env: "TS_AUTHKEY" },
  { id: "telegram-bot-token", description: "Telegram bot token (<bot id>:AA…), bare or in a /bot<token>/ API path", keywords: [":a"], token: "\\d{5,16}:A[A-Za-z0-9_-]{34}", lookbehind: "(?:(?<![A-Za-z0-9_])|(?<=/bot))", flags: "", examples: ["curl -s https://api.telegram.org/bot" + cat("7304", "518822") + ":AA" + fake(A.base64url, 33, 9901) + "/getMe"], entropy: 3.5, shape: [[A.digits, 10], ":AA", [U64, 33]], env: "TELEGRAM_BOT_TOKEN" },
  { id: "twitter-bearer-token", description: "X / Twitter app bearer token (22 × A + 80–100)", keywords: ["aaaaaaaaaaaaaaaaaaaaaa"], token: "A{22}[A-Za-z0-9%]{80,120}", entropy: 3.5, shape: ["AAAAAAAAAAAAAAAAAAAAA", "A", [AN, 90]], env: "TWITTER_BEARER_TOKEN" },
  { id: "typeform-token", description: "Typeform personal token (tfp_)", keywords: ["tfp_"], token: "tfp_[A-Za-z0-9_.=-]{59}", shape: ["tfp_", [U64, 59]], env: "TYPEFORM_TOKEN" },
  { id: "vercel-token", description: "Vercel tokens (vcp_, vci_, vca_, vcr_, vck_)", keywords: ["vcp_", "vci_", "vca_", "vcr_", "vck_"], token: "vc[pikar]_[A-Za-z0-9]{56,60}", shape: ["vcp_", [AN, 56]], env: "VERCEL_TOKEN" },
  { id: "xai-api-key", description: "xAI API key (xai- + 80)", keywords: ["xai-"], token: "xai-[A-Za-z0-9]{70,90}", shape: ["xai-", [AN, 80]], env: "XAI_API_KEY" },
  { id: "yandex-token", description: "Yandex Cloud tokens (AQVN… API key, t1.… IAM token, YC… static key)", keywords: ["aqvn", "t1.", "ycaj", "ycm", "ycn", "yco"], token: "(?:AQVN[A-Za-z0-9_-]{35,38}|t1\\.[A-Za-z0-9_-]{20,200}={0,2}\\.[A-Za-z0-9_-]{86}|YC[A-Za-z0-9_-]{38})", entropy: 3.5, shape: ["AQVN", [U64, 36]], env: "YC_API_KEY" },
  { id: "buildkite-token", description: "Buildkite agent and API tokens (bkua_, bkat_ + 40 hex)", keywords: ["bkua_", "bkat_"], token: "bk(?:ua|at)_[a-f0-9]{40}", shape: ["bkua_", [H, 40]], env: "BUILDKITE_API_TOKEN" },
  { id: "circleci-token", description: "CircleCI personal token (CCIPAT_)", keywords: ["ccipat_"], token: "CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}", shape: ["CCIPAT_", [AN, 22], "_", [H, 40]], env: "CIRCLECI_TOKEN" },
  { id: "contentful-token", description: "Contentful personal access token (CFPAT-)", keywords: ["cfpat-"], token: "CFPAT-[A-Za-z0-9_-]{43}", shape: ["CFPAT-", [U64, 43]], env: "CONTENTFUL_MANAGEMENT_TOKEN" },
  { id: "bitbucket-app-password", description: "Bitbucket app password / access token (ATBB…, ATCTT3…)", keywords: ["atbb", "atctt3"], token: "(?:ATBB[A-Za-z0-9]{32}|ATCTT3[A-Za-z0-9_=-]{180,200})", entropy: 3.5, shape: ["ATBB", [AN, 32]], env: "BITBUCKET_APP_PASSWORD" },
  { id: "neon-api-key", description: "Neon API key (napi_ + 64)", keywords: ["napi_"], token: "napi_[a-z0-9]{64}", shape: ["napi_", [LN, 64]], env: "NEON_API_KEY" },
  { id: "resend-api-key", description: "Resend API key (re_ + 8 + _ + 24)", keywords: ["re_"], token: "re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}", entropy: 3.5, shape: ["re_", [AN, 8], "_", [AN, 24]], env: "RESEND_API_KEY" },
  { id: "render-api-key", description: "Render API key (rnd_ + 32)", keywords: ["rnd_"], token: "rnd_[A-Za-z0-9]{32}", shape: ["rnd_", [AN, 32]], env: "RENDER_API_KEY" },
  { id: "netlify-token", description: "Netlify personal access token (nfp_ + 36)", keywords: ["nfp_"], token: "nfp_[A-Za-z0-9]{36,40}", shape: ["nfp_", [AN, 36]], env: "NETLIFY_AUTH_TOKEN" },
  { id: "terraform-token", description: "Terraform Cloud / HCP API token (<14>.atlasv1.<60–70>)", keywords: ["atlasv1"], token: "[A-Za-z0-9]{14}\\.atlasv1\\.[A-Za-z0-9_=-]{60,70}", shape: [[AN, 14], ".atlasv1.", [U64, 67]], env: "TF_TOKEN_app_terraform_io" },
  { id: "fireworks-api-key", description: "Fireworks AI API key (fw_ + 24)", keywords: ["fw_"], token: "fw_[A-Za-z0-9]{24}", entropy: 3.5, shape: ["fw_", [AN, 24]], env: "FIREWORKS_API_KEY" },
  { id: "cerebras-api-key", description: "Cerebras API key (csk- + 48)", keywords: ["csk-"], token: "csk-[a-z0-9]{48}", shape: ["csk-", [LN, 48]], env: "CEREBRAS_API_KEY" },
  { id: "tavily-api-key", description: "Tavily API key (tvly- + 32)", keywords: ["tvly-"], token: "tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}", shape: ["tvly-", [AN, 32]], env: "TAVILY_API_KEY" },
  { id: "elevenlabs-api-key", description: "ElevenLabs API key (sk_ + 48 hex)", keywords: ["sk_"], token: "sk_[a-f0-9]{48}", shape: ["sk_", [H, 48]], env: "ELEVENLABS_API_KEY" },
  { id: "gitlab-session-cookie", description: "GitLab session cookie (_gitlab_session=<32 hex>)", keywords: ["_gitlab_session="], token: "_gitlab_session=(?<s>[0-9a-z]{32})", shape: ["_gitlab_session=", [H, 32]], env: "GITLAB_COOKIE" },
  { id: "azure-storage-key", description: "Azure Storage account key / Service Bus shared access key in a connection string (AccountKey=, SharedAccessKey=)", keywords: ["accountkey", "sharedaccesskey"], token: "(?:AccountKey|SharedAccessKey)\\s{0,2}=\\s{0,2}(?<s>[A-Za-z0-9+/]{40,88}={0,2})", flags: "i", entropy: 4, shape: ["DefaultEndpointsProtocol=https;AccountName=lakelogs;AccountKey=", [B64, 86], "==;EndpointSuffix=core.windows.net"], env: "AZURE_STORAGE_CONNECTION_STRING" },
  { id: "azure-sas-signature", description: "Azure SAS token signature (sig= in a query string or a SAS token)", keywords: ["sig="], token: "(?:[?&;]|\\b)sig=(?<s>[A-Za-z0-9%+/]{30,120}(?:%3D|=){0,2})", flags: "i", entropy: 3.5, shape: ["https://lakelogs.blob.core.windows.net/c/a.txt?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-12-31T00:00:00Z&sig=", [B64, 43], "%3D"], env: "AZURE_SAS_URL" },
  { id: "sidekiq-url", description: "Sidekiq Pro / Enterprise gem server credentials in a URL", keywords: ["contribsys.com"], token: "https?://(?<s>[a-f0-9]{8}:[a-f0-9]{8})@(?:gems|enterprise)\\.contribsys\\.com", shape: ["https://", [H, 8], ":", [H, 8], "@gems.contribsys.com/"], env: "BUNDLE_GEMS__CONTRIBSYS__COM" },
];

/** Build a sample token from a shape (deterministic for a seed). */
export function sampleOf(shape: readonly ShapePart[], seed: number): string {
  let s = "";
  let k = 0;
  for (const p of shape) s += typeof p === "string" ? p : fake(p[0], p[1], seed * 131 + k++);
  return s;
}

/** The distinctive literal prefix of a shape (its first literal part), or "" when it starts with random text. */
export function prefixOf(shape: readonly ShapePart[]): string {
  return typeof shape[0] === "string" ? shape[0] : "";
}

/** A low-entropy copy of a sample: every random part a repeated character. */
export function lowEntropyOf(shape: readonly ShapePart[]): string {
  return shape.map((p) => (typeof p === "string" ? p : (p[0].includes("x") ? "x" : p[0][0]!).repeat(p[1]))).join("");
}

export { cat };
