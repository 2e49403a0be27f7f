//! MasterService's namespace calls: create, modify, delete, describe and
//! list namespaces (stored in ferrobase's meta).

use super::*;

impl MasterService<'_> {
    pub(super) fn namespace(&self, name: &str) -> Outcome<pb::NamespaceDescriptor> {
        let all = self.master.namespaces();
        let config = all.get(name).ok_or_else(|| {
            HBaseException::new(ExceptionClass::NamespaceNotFound, name.to_string())
        })?;
        Ok(pb::NamespaceDescriptor {
            name: name.as_bytes().to_vec().into(),
            configuration: config
                .iter()
                .map(|(k, v)| pb::NameStringPair {
                    name: k.clone(),
                    value: v.clone(),
                })
                .collect(),
        })
    }

    fn namespace_config(
        d: &pb::NamespaceDescriptor,
    ) -> Outcome<(String, BTreeMap<String, String>)> {
        let name = std::str::from_utf8(&d.name)
            .map_err(|_| do_not_retry("namespace name is not UTF-8"))?
            .to_string();
        let config = d
            .configuration
            .iter()
            .map(|p| (p.name.clone(), p.value.clone()))
            .collect();
        Ok((name, config))
    }

    pub fn create_namespace(
        &self,
        req: &pb::CreateNamespaceRequest,
    ) -> Outcome<pb::CreateNamespaceResponse> {
        self.require_global("createNamespace", ADMIN)?;
        let (name, config) = Self::namespace_config(&req.namespace_descriptor)?;
        self.master
            .create_namespace(&name, config)
            .map_err(exception)?;
        Ok(pb::CreateNamespaceResponse {
            proc_id: Some(self.procedure()),
        })
    }

    pub fn modify_namespace(
        &self,
        req: &pb::ModifyNamespaceRequest,
    ) -> Outcome<pb::ModifyNamespaceResponse> {
        self.require_global("modifyNamespace", ADMIN)?;
        let (name, config) = Self::namespace_config(&req.namespace_descriptor)?;
        self.master
            .modify_namespace(&name, config)
            .map_err(exception)?;
        Ok(pb::ModifyNamespaceResponse {
            proc_id: Some(self.procedure()),
        })
    }

    pub fn delete_namespace(
        &self,
        req: &pb::DeleteNamespaceRequest,
    ) -> Outcome<pb::DeleteNamespaceResponse> {
        self.require_global("deleteNamespace", ADMIN)?;
        let ns = &req.namespace_name;
        if !self.tables(None, false, Some(ns))?.is_empty() {
            return Err(HBaseException::new(
                ExceptionClass::Constraint,
                format!("namespace {ns} has tables: drop them before deleting it"),
            ));
        }
        self.master
            .delete_namespace(&req.namespace_name)
            .map_err(exception)?;
        Ok(pb::DeleteNamespaceResponse {
            proc_id: Some(self.procedure()),
        })
    }

    pub fn namespace_descriptor(
        &self,
        req: &pb::GetNamespaceDescriptorRequest,
    ) -> Outcome<pb::GetNamespaceDescriptorResponse> {
        self.access
            .require_namespace("getNamespaceDescriptor", &req.namespace_name, ADMIN)
            .map_err(exception)?;
        Ok(pb::GetNamespaceDescriptorResponse {
            namespace_descriptor: self.namespace(&req.namespace_name)?,
        })
    }

    pub fn namespace_descriptors(&self) -> Outcome<pb::ListNamespaceDescriptorsResponse> {
        let namespace_descriptor = self
            .master
            .namespaces()
            .keys()
            .map(|n| self.namespace(n))
            .collect::<Outcome<Vec<_>>>()?;
        Ok(pb::ListNamespaceDescriptorsResponse {
            namespace_descriptor,
        })
    }

    pub fn namespace_names(&self) -> Outcome<pb::ListNamespacesResponse> {
        Ok(pb::ListNamespacesResponse {
            namespace_name: self.master.namespaces().into_keys().collect(),
        })
    }
}
