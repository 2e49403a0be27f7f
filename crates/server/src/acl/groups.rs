//! A user's groups, as Hadoop's `Groups` service finds them for HBase's
//! `@group` grants and superusers: first the fixed list of
//! `hadoop.user.group.static.mapping.overrides` (`user=g1,g2;user2=;`),
//! then `hadoop.security.group.mapping`: the server host's groups of the
//! user (what `id -Gn USER` prints, which follows NSS, so LDAP or SSSD
//! users too; Hadoop's `ShellBasedUnixGroupsMapping` runs the same
//! command, its JNI mapping asks the same library), or none
//! (`NullGroupsMapping`). Answers are kept `hadoop.security.groups.cache.secs`.
//!
//! A user name comes from a client: it is passed to `id` as one argument
//! after `--`, never through a shell, and an unknown user has no groups.
//! This module never decides a permission; the checker does.

use crate::error::{Result, ServerError};
use ferrobase_proto::ErrorCode;
use ferrobase_types::Settings;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where groups come from after the static overrides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// The host's groups of the user (`id -Gn`).
    Host,
    /// No groups.
    Null,
}

/// A user's groups and when they were looked up.
type Cached = (Instant, Arc<[String]>);

/// Most users a cache keeps; past it the oldest answers are dropped.
const MAX_CACHED: usize = 10_000;

/// The groups of users, cached.
pub struct GroupMapping {
    source: Source,
    overrides: HashMap<String, Arc<[String]>>,
    ttl: Duration,
    cache: Mutex<HashMap<String, Cached>>,
}

impl GroupMapping {
    /// The mapping `settings` ask for; an unknown mapping class or a
    /// malformed override is refused by name.
    pub fn from_settings(settings: &Settings) -> Result<GroupMapping> {
        let class = settings.group_mapping.trim();
        let simple = class.rsplit('.').next().unwrap_or(class);
        let source = match simple {
            "JniBasedUnixGroupsMappingWithFallback"
            | "JniBasedUnixGroupsMapping"
            | "ShellBasedUnixGroupsMapping" => Source::Host,
            "NullGroupsMapping" => Source::Null,
            _ => {
                return Err(ServerError::new(
                    ErrorCode::InvalidRequest,
                    format!(
                        "hadoop.security.group.mapping '{class}' is not supported (use \
                         ShellBasedUnixGroupsMapping, JniBasedUnixGroupsMappingWithFallback or \
                         NullGroupsMapping)"
                    ),
                ));
            }
        };
        Ok(GroupMapping {
            source,
            overrides: parse_overrides(&settings.group_static_overrides)?,
            ttl: Duration::from_secs(settings.groups_cache_secs),
            cache: Mutex::default(),
        })
    }

    /// A mapping that gives nobody a group.
    pub fn none() -> GroupMapping {
        GroupMapping {
            source: Source::Null,
            overrides: HashMap::new(),
            ttl: Duration::ZERO,
            cache: Mutex::default(),
        }
    }

    /// `user`'s groups (without the `@`); none for an empty or unknown user.
    pub fn groups_of(&self, user: &str) -> Arc<[String]> {
        if let Some(g) = self.overrides.get(user) {
            return g.clone();
        }
        if user.is_empty() || self.source == Source::Null {
            return Arc::from(Vec::new());
        }
        let now = Instant::now();
        if let Some((at, g)) = self.cache.lock().get(user)
            && now.duration_since(*at) < self.ttl
        {
            return g.clone();
        }
        let groups: Arc<[String]> = Arc::from(host_groups(user));
        let mut cache = self.cache.lock();
        if cache.len() >= MAX_CACHED {
            let ttl = self.ttl;
            cache.retain(|_, (at, _)| now.duration_since(*at) < ttl);
            if cache.len() >= MAX_CACHED {
                cache.clear();
            }
        }
        cache.insert(user.to_string(), (now, groups.clone()));
        groups
    }
}

/// `user=g1,g2;user2=;` as Hadoop reads it (spaces around names ignored).
fn parse_overrides(text: &str) -> Result<HashMap<String, Arc<[String]>>> {
    let mut out = HashMap::new();
    for entry in text.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let Some((user, groups)) = entry.split_once('=') else {
            return Err(ServerError::new(
                ErrorCode::InvalidRequest,
                format!(
                    "hadoop.user.group.static.mapping.overrides: '{entry}' is not user=group,..."
                ),
            ));
        };
        let groups: Vec<String> = groups
            .split(',')
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .map(str::to_string)
            .collect();
        out.insert(user.trim().to_string(), Arc::from(groups));
    }
    Ok(out)
}

/// The host's groups of `user` (`id -Gn -- USER`); none when `id` fails
/// (no such user) or cannot run.
fn host_groups(user: &str) -> Vec<String> {
    // After "--" a name starting with '-' is a name, not an option;
    // control characters never name a user.
    if user.chars().any(char::is_control) {
        return Vec::new();
    }
    match std::process::Command::new("id")
        .args(["-Gn", "--", user])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
    {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        Ok(_) => Vec::new(),
        Err(e) => {
            tracing::warn!(error = %e, "could not run `id` to find a user's groups");
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapping(class: &str, overrides: &str) -> Result<GroupMapping> {
        GroupMapping::from_settings(&Settings {
            group_mapping: class.into(),
            group_static_overrides: overrides.into(),
            ..Settings::default()
        })
    }

    #[test]
    fn overrides_come_first_and_parse_as_hadoop_does() {
        let m = mapping(
            "org.apache.hadoop.security.NullGroupsMapping",
            " alice = ops , dev ; bob=;dr.who=",
        )
        .unwrap();
        assert_eq!(&*m.groups_of("alice"), ["ops", "dev"]);
        assert!(m.groups_of("bob").is_empty());
        assert!(m.groups_of("carol").is_empty(), "null mapping");
        let e = mapping("NullGroupsMapping", "alice:ops").err().unwrap();
        assert!(e.to_string().contains("alice:ops"), "{e}");
    }

    #[test]
    fn unknown_mapping_classes_are_named() {
        let e = mapping("org.example.LdapMagic", "").err().unwrap();
        assert!(e.to_string().contains("org.example.LdapMagic"), "{e}");
        assert!(mapping("ShellBasedUnixGroupsMapping", "").is_ok());
    }

    #[test]
    fn host_groups_are_what_id_lists() {
        let m = mapping("ShellBasedUnixGroupsMapping", "").unwrap();
        let me = ferrobase_types::settings::os_user();
        let want = std::process::Command::new("id")
            .args(["-Gn", &me])
            .output()
            .unwrap();
        let want: Vec<String> = String::from_utf8_lossy(&want.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect();
        assert!(!want.is_empty());
        assert_eq!(&*m.groups_of(&me), &want[..]);
        // Cached: the same answer again.
        assert_eq!(&*m.groups_of(&me), &want[..]);
        for odd in ["no-such-user-xyz", "", "-G", "a\nb", "$(id)"] {
            assert!(m.groups_of(odd).is_empty(), "{odd:?}");
        }
    }
}
