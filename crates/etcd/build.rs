//! Compiles etcd's v3 API protos with protox (pure Rust: no system `protoc`,
//! which is what the `etcd-client` crate needs and a fresh machine lacks).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "proto/etcd/api/etcdserverpb/rpc.proto",
        "proto/etcd/server/etcdserver/api/v3election/v3electionpb/v3election.proto",
    ];
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(files, ["proto"])?;
    tonic_prost_build::configure()
        .build_server(false)
        .compile_fds(fds)?;
    Ok(())
}
