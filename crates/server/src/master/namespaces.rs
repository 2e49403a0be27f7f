//! The master's namespaces: `default` and `hbase` always exist; others are
//! created, altered and dropped (when empty) in the meta.

use super::*;

impl Master {
    /// Every namespace with its configuration: `default`, `hbase` and
    /// those users created.
    pub fn namespaces(&self) -> BTreeMap<String, BTreeMap<String, String>> {
        let mut all = self.meta.snapshot().namespaces;
        for builtin in BUILTIN_NAMESPACES {
            all.entry(builtin.to_string()).or_default();
        }
        all
    }

    /// The tables of namespace `ns` (full names, `ns:t`; a `default` table
    /// has no prefix), sorted.
    pub fn namespace_tables(&self, ns: &str) -> Result<Vec<String>> {
        let m = self.meta.snapshot();
        if !BUILTIN_NAMESPACES.contains(&ns) && !m.namespaces.contains_key(ns) {
            return Err(ServerError::new(
                ErrorCode::NamespaceNotFound,
                format!("namespace '{ns}' does not exist"),
            ));
        }
        Ok(m.tables
            .keys()
            .filter(|t| namespace_of(t) == ns)
            .cloned()
            .collect())
    }

    /// Creates a namespace.
    pub fn create_namespace(&self, name: &str, config: BTreeMap<String, String>) -> Result<()> {
        let valid =
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid {
            return Err(ServerError::new(
                ErrorCode::InvalidRequest,
                format!(
                    "namespace name '{name}' is invalid: only letters, digits and '_' are allowed"
                ),
            ));
        }
        let _ddl = self.ddl.lock();
        self.meta.update(|m| {
            if BUILTIN_NAMESPACES.contains(&name) || m.namespaces.contains_key(name) {
                return Err(ServerError::new(
                    ErrorCode::NamespaceExists,
                    format!("namespace '{name}' already exists"),
                ));
            }
            m.namespaces.insert(name.to_string(), config);
            Ok(())
        })
    }

    /// Replaces a user namespace's configuration.
    pub fn modify_namespace(&self, name: &str, config: BTreeMap<String, String>) -> Result<()> {
        let _ddl = self.ddl.lock();
        self.meta.update(|m| match m.namespaces.get_mut(name) {
            Some(c) => {
                *c = config;
                Ok(())
            }
            None if BUILTIN_NAMESPACES.contains(&name) => Err(ServerError::new(
                ErrorCode::InvalidRequest,
                format!("namespace '{name}' is reserved and cannot be modified"),
            )),
            None => Err(ServerError::new(
                ErrorCode::NamespaceNotFound,
                format!("namespace '{name}' does not exist"),
            )),
        })
    }

    /// Deletes an empty namespace (not `default` or `hbase`).
    pub fn delete_namespace(&self, name: &str) -> Result<()> {
        let _ddl = self.ddl.lock();
        self.meta.update(|m| {
            if BUILTIN_NAMESPACES.contains(&name) {
                return Err(ServerError::new(
                    ErrorCode::InvalidRequest,
                    format!("namespace '{name}' is reserved and cannot be deleted"),
                ));
            }
            if !m.namespaces.contains_key(name) {
                return Err(ServerError::new(
                    ErrorCode::NamespaceNotFound,
                    format!("namespace '{name}' does not exist"),
                ));
            }
            let prefix = format!("{name}:");
            let tables: Vec<&str> = m
                .tables
                .keys()
                .filter(|t| t.starts_with(&prefix))
                .map(String::as_str)
                .collect();
            if !tables.is_empty() {
                return Err(ServerError::new(
                    ErrorCode::InvalidRequest,
                    format!(
                        "namespace '{name}' has tables ({}): drop them first",
                        tables.join(", ")
                    ),
                ));
            }
            m.namespaces.remove(name);
            m.acl.remove_namespace(name);
            Ok(())
        })?;
        self.publish_acl();
        Ok(())
    }
}
