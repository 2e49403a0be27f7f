//! What an `s3://` root says: bucket, key prefix, endpoint, region and
//! credentials, with the `AWS_*` environment as fallback.
//!
//! Owns parsing and validation only; it never touches the network. Every
//! refusal is a [`StorageError::InvalidRequest`] naming the part that is
//! wrong. Messages show the root without its query, so a secret key given
//! in the URL never ends up in a log.

use crate::error::{Result, StorageError};
use std::fmt;

/// The query parameters a root may carry.
const KEYS: [&str; 4] = ["endpoint", "region", "access_key_id", "secret_access_key"];

/// The region when neither the URL nor `AWS_REGION` names one.
const DEFAULT_REGION: &str = "us-east-1";

/// A parsed `s3://` root.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct S3Config {
    pub bucket: String,
    /// `a/b` (no leading, trailing or doubled `/`); empty for the bucket root.
    pub prefix: String,
    /// `http(s)://host[:port][/path]`; `None` for AWS's own endpoint.
    pub endpoint: Option<String>,
    pub region: String,
    /// `None`: OpenDAL's default chain (profile files, instance metadata).
    pub credentials: Option<Credentials>,
}

#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Credentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    /// Only from `AWS_SESSION_TOKEN`, and only with keys from the
    /// environment: temporary keys are useless without their token.
    pub session_token: Option<String>,
}

// By hand, so a secret never reaches a log through `{:?}`.
impl fmt::Debug for S3Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Config")
            .field("bucket", &self.bucket)
            .field("prefix", &self.prefix)
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field(
                "access_key_id",
                &self.credentials.as_ref().map(|c| &c.access_key_id),
            )
            .finish_non_exhaustive()
    }
}

impl S3Config {
    /// Parses `bucket[/prefix][?k=v&...]` (what follows `s3://`); `env`
    /// looks up an environment variable (a parameter so tests need not
    /// mutate the process environment).
    pub fn parse(rest: &str, env: impl Fn(&str) -> Option<String>) -> Result<S3Config> {
        let (location, query) = match rest.split_once('?') {
            Some((l, q)) => (l, Some(q)),
            None => (rest, None),
        };
        let bad = |why: String| {
            StorageError::InvalidRequest(format!("storage root 's3://{location}': {why}"))
        };
        let (bucket, prefix) = location.split_once('/').unwrap_or((location, ""));
        if bucket.is_empty() {
            return Err(bad(
                "missing bucket name (expected s3://bucket[/prefix][?endpoint=...])".into(),
            ));
        }
        // S3's own rule is stricter (3-63 lowercase characters); this only
        // refuses what cannot be a bucket on any S3-compatible store.
        if let Some(c) = bucket
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))
        {
            return Err(bad(format!(
                "bucket name '{bucket}' has the character {c:?} (allowed: letters, digits, '.', '-', '_')"
            )));
        }
        let prefix = normalize(prefix).map_err(|why| bad(format!("prefix: {why}")))?;

        let mut given: [Option<String>; 4] = Default::default();
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let Some((k, v)) = pair.split_once('=') else {
                return Err(bad(format!("query parameter '{pair}' has no '=value'")));
            };
            let Some(i) = KEYS.iter().position(|key| *key == k) else {
                return Err(bad(format!(
                    "unknown query parameter '{k}' (valid: {})",
                    KEYS.join(", ")
                )));
            };
            if given[i].is_some() {
                return Err(bad(format!("query parameter '{k}' is given twice")));
            }
            let v = percent_decode(v).map_err(|why| bad(format!("parameter '{k}': {why}")))?;
            given[i] = Some(v);
        }
        let [endpoint, region, access_key_id, secret_access_key] = given;
        // An empty environment variable counts as unset, as in the AWS CLI.
        let env = |name: &str| env(name).filter(|v| !v.is_empty());

        let endpoint = match (endpoint, env("AWS_ENDPOINT_URL")) {
            (Some(e), _) => Some(check_endpoint(&e).map_err(|why| bad(format!("endpoint {why}")))?),
            (None, Some(e)) => Some(
                check_endpoint(&e)
                    .map_err(|why| bad(format!("AWS_ENDPOINT_URL (no endpoint= given) {why}")))?,
            ),
            (None, None) => None,
        };
        let region = region
            .or_else(|| env("AWS_REGION"))
            .unwrap_or_else(|| DEFAULT_REGION.to_string());

        // Each key falls back to the environment on its own; a session
        // token belongs to keys that both came from the environment.
        let from_env = access_key_id.is_none() && secret_access_key.is_none();
        let access_key_id = access_key_id.or_else(|| env("AWS_ACCESS_KEY_ID"));
        let secret_access_key = secret_access_key.or_else(|| env("AWS_SECRET_ACCESS_KEY"));
        let credentials = match (access_key_id, secret_access_key) {
            (Some(access_key_id), Some(secret_access_key)) => Some(Credentials {
                access_key_id,
                secret_access_key,
                session_token: if from_env {
                    env("AWS_SESSION_TOKEN")
                } else {
                    None
                },
            }),
            (Some(_), None) | (None, Some(_)) => {
                return Err(bad("access_key_id (AWS_ACCESS_KEY_ID) is given without \
                     secret_access_key (AWS_SECRET_ACCESS_KEY), or the other way round"
                    .into()));
            }
            // OpenDAL's default chain: profile files, instance metadata.
            (None, None) => None,
        };
        Ok(S3Config {
            bucket: bucket.to_string(),
            prefix,
            endpoint,
            region,
            credentials,
        })
    }
}

/// `/a//b/./c/` → `a/b/c`; `..` is refused (a key has no parent to go to,
/// and a root must not reach outside its prefix).
pub(crate) fn normalize(path: &str) -> std::result::Result<String, String> {
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(format!("'{path}': '..' is not allowed in an S3 path")),
            part => parts.push(part),
        }
    }
    Ok(parts.join("/"))
}

/// Accepts `http(s)://host[:port][/path]` and returns it without a trailing
/// `/`; the error completes "endpoint …".
fn check_endpoint(endpoint: &str) -> std::result::Result<String, String> {
    let url = url::Url::parse(endpoint).map_err(|e| format!("'{endpoint}' is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("'{endpoint}' must start with http:// or https://"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("'{endpoint}' has no host"));
    }
    if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
        return Err(format!(
            "'{endpoint}' must be scheme://host[:port] (no user, query or fragment)"
        ));
    }
    Ok(endpoint.trim_end_matches('/').to_string())
}

/// Decodes `%XX` escapes. `+` stays `+`: secret keys often contain it,
/// and reading it as a space (form encoding) would corrupt them.
fn percent_decode(v: &str) -> std::result::Result<String, String> {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad %-escape at byte {i}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "%-escapes decode to invalid UTF-8".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn err(rest: &str) -> String {
        match S3Config::parse(rest, no_env) {
            Ok(c) => panic!("{rest}: parsed as {c:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn roots_parse_with_env_fallbacks() {
        let c = S3Config::parse("b//x/./y/?region=eu-west-1", no_env).unwrap();
        assert_eq!((c.bucket.as_str(), c.prefix.as_str()), ("b", "x/y"));
        assert_eq!((c.endpoint, c.region.as_str()), (None, "eu-west-1"));
        assert!(c.credentials.is_none());

        let env = |k: &str| match k {
            "AWS_ENDPOINT_URL" => Some("http://127.0.0.1:9000/".to_string()),
            "AWS_ACCESS_KEY_ID" => Some("ak".to_string()),
            "AWS_SECRET_ACCESS_KEY" => Some("sk".to_string()),
            "AWS_SESSION_TOKEN" => Some("tok".to_string()),
            "AWS_REGION" => Some(String::new()),
            _ => None,
        };
        let c = S3Config::parse("b", env).unwrap();
        assert_eq!(c.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        assert_eq!(c.region, "us-east-1", "empty AWS_REGION counts as unset");
        let cred = c.credentials.unwrap();
        assert_eq!(cred.session_token.as_deref(), Some("tok"));

        // URL keys win over the environment, and carry no session token.
        let c = S3Config::parse("b?access_key_id=A&secret_access_key=s%2Fk+1", env).unwrap();
        let cred = c.credentials.unwrap();
        assert_eq!(cred.secret_access_key, "s/k+1");
        assert_eq!(cred.session_token, None);
        assert!(!format!("{:?}", S3Config::parse("b", env).unwrap()).contains("sk"));
    }

    #[test]
    fn bad_roots_say_what_is_wrong_without_leaking_secrets() {
        for (rest, says) in [
            ("", "missing bucket"),
            ("/p", "missing bucket"),
            ("b b/p", "character ' '"),
            ("b/../x", "'..'"),
            ("b?color=red", "unknown query parameter 'color'"),
            ("b?region", "no '=value'"),
            ("b?region=a&region=b", "given twice"),
            ("b?endpoint=localhost:9000", "must start with http"),
            ("b?endpoint=http://", "endpoint"),
            ("b?endpoint=http://h:1/?x=1", "no user, query"),
            ("b?endpoint=%zz", "bad %-escape"),
            ("b?access_key_id=a", "without"),
        ] {
            let e = err(rest);
            assert!(e.contains(says), "{rest}: {e}");
        }
        let e = err("b?secret_access_key=hunter2&color=1");
        assert!(!e.contains("hunter2"), "{e}");
    }
}
