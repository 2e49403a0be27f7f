//! Authorization over HBase's native RPC, with raw frames as the Java
//! client sends them: the caller is the `effective_user` of the
//! connection header (simple authentication). A denied call is answered
//! with `org.apache.hadoop.hbase.security.AccessDeniedException`; the
//! superuser grants and revokes with MasterService's `Grant` and `Revoke`
//! (HBase's field numbers) and lists with `GetUserPermissions`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod raw_hbase;

use raw_hbase::RawConn;

use bytes::Bytes;
use ferrobase_hbase_wire::frame::ResponseFrame;
use ferrobase_hbase_wire::names::{RegionName, TableName};
use ferrobase_hbase_wire::pb;
use ferrobase_types::{RowMutation, Settings};

const DENIED: &str = "org.apache.hadoop.hbase.security.AccessDeniedException";

fn exception(r: &ResponseFrame) -> (String, String) {
    let e = r.header.exception.clone().unwrap_or_default();
    (
        e.exception_class_name.unwrap_or_default(),
        e.stack_trace.unwrap_or_default(),
    )
}

fn ok<M: prost::Message + Default>(r: &ResponseFrame) -> M {
    match r.decode_message::<M>() {
        Ok(m) => m,
        Err(_) => panic!("call failed: {:?}", exception(r)),
    }
}

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn get(region: &pb::RegionSpecifier) -> pb::GetRequest {
    pb::GetRequest {
        region: region.clone(),
        get: pb::Get {
            row: b("r1"),
            ..Default::default()
        },
    }
}

fn put(region: &pb::RegionSpecifier, row: &str) -> pb::MutateRequest {
    pb::MutateRequest {
        region: region.clone(),
        mutation: pb::MutationProto {
            row: Some(b(row)),
            mutate_type: Some(pb::mutation_proto::MutationType::Put as i32),
            column_value: vec![pb::mutation_proto::ColumnValue {
                family: b("f"),
                qualifier_value: vec![pb::mutation_proto::column_value::QualifierValue {
                    qualifier: Some(b("c")),
                    value: Some(b("v")),
                    ..Default::default()
                }],
            }],
            ..Default::default()
        },
        ..Default::default()
    }
}

fn table_permission(user: &str, actions: &[pb::permission::Action]) -> pb::UserPermission {
    pb::UserPermission {
        user: b(user),
        permission: pb::Permission {
            r#type: pb::permission::Type::Table as i32,
            table_permission: Some(pb::TablePermission {
                table_name: Some(TableName::parse("t").unwrap().to_pb()),
                action: actions.iter().map(|a| *a as i32).collect(),
                ..Default::default()
            }),
            ..Default::default()
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn effective_user_is_checked_and_granted() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        security_authorization: true,
        superuser: "admin".into(),
        client_user: "admin".into(),
        ..common::settings()
    };
    let (server, conn) = common::start_on(dir.path(), settings).await;
    conn.admin()
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    conn.table("t")
        .put(RowMutation::new("r1").put("f", "c", "v"))
        .await
        .unwrap();
    let id = conn.admin().describe("t").await.unwrap().regions[0].region_id;
    let region = RegionName::new(&TableName::parse("t").unwrap(), b"", id).specifier();

    // bob has nothing: Get and Put are denied with HBase's exception.
    let mut bob = RawConn::connect(server.addr(), "ClientService", Some("bob")).await;
    let (class, text) = exception(&bob.call("Get", &get(&region)).await);
    assert_eq!(class, DENIED);
    assert!(text.contains("'bob'") && text.contains("READ"), "{text}");
    let (class, _) = exception(&bob.call("Mutate", &put(&region, "r2")).await);
    assert_eq!(class, DENIED);
    // ... and so is his DDL and granting himself.
    let mut bob_master = RawConn::connect(server.addr(), "MasterService", Some("bob")).await;
    let disable = pb::DisableTableRequest {
        table_name: TableName::parse("t").unwrap().to_pb(),
        ..Default::default()
    };
    assert_eq!(
        exception(&bob_master.call("DisableTable", &disable).await).0,
        DENIED
    );
    let grant_rw = pb::GrantRequest {
        user_permission: table_permission(
            "bob",
            &[pb::permission::Action::Read, pb::permission::Action::Write],
        ),
        merge_existing_permissions: None,
    };
    assert_eq!(
        exception(&bob_master.call("Grant", &grant_rw).await).0,
        DENIED
    );

    // The superuser grants bob READ and WRITE on t.
    let mut admin = RawConn::connect(server.addr(), "MasterService", Some("admin")).await;
    let caps: pb::SecurityCapabilitiesResponse = ok(&admin
        .call(
            "getSecurityCapabilities",
            &pb::SecurityCapabilitiesRequest {},
        )
        .await);
    assert!(
        caps.capabilities
            .contains(&(pb::security_capabilities_response::Capability::Authorization as i32))
    );
    let _: pb::GrantResponse = ok(&admin.call("Grant", &grant_rw).await);
    let list = pb::GetUserPermissionsRequest {
        r#type: Some(pb::permission::Type::Table as i32),
        table_name: Some(TableName::parse("t").unwrap().to_pb()),
        ..Default::default()
    };
    let listed: pb::GetUserPermissionsResponse = ok(&admin.call("GetUserPermissions", &list).await);
    let bobs: Vec<&pb::UserPermission> = listed
        .user_permission
        .iter()
        .filter(|p| p.user == "bob")
        .collect();
    assert_eq!(bobs.len(), 1);
    assert_eq!(
        bobs[0].permission.table_permission.as_ref().unwrap().action,
        [0, 1],
        "READ and WRITE"
    );

    // Now bob reads and writes; DDL is still denied; he may ask about
    // his own permissions.
    let got: pb::GetResponse = ok(&bob.call("Get", &get(&region)).await);
    assert_eq!(got.result.unwrap().associated_cell_count, Some(1));
    let done: pb::MutateResponse = ok(&bob.call("Mutate", &put(&region, "r2")).await);
    assert_eq!(done.processed, Some(true));
    assert_eq!(
        exception(&bob_master.call("DisableTable", &disable).await).0,
        DENIED
    );
    let has = pb::HasUserPermissionsRequest {
        user_name: None,
        permission: vec![
            table_permission("bob", &[pb::permission::Action::Write]).permission,
            table_permission("bob", &[pb::permission::Action::Admin]).permission,
        ],
    };
    let has: pb::HasUserPermissionsResponse =
        ok(&bob_master.call("HasUserPermissions", &has).await);
    assert_eq!(has.has_user_permission, [true, false]);

    // Revoked: denied again.
    let revoke = pb::RevokeRequest {
        user_permission: table_permission("bob", &[]),
    };
    let _: pb::RevokeResponse = ok(&admin.call("Revoke", &revoke).await);
    assert_eq!(exception(&bob.call("Get", &get(&region)).await).0, DENIED);
    server.stop().await.unwrap();
}
