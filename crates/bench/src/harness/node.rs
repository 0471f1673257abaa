//! What is done once per node under mpirun rather than once per rank: the
//! server of a backend that starts its own (one gateway or HTTP server per
//! node, over the shared directory, that the node's ranks connect to), the
//! page-cache drop and the NIC counters.
//!
//! A node is a host name: the first rank of each host leads it. A Unix
//! socket or a loopback port only reaches the ranks of the same host, so
//! per-node servers are what make these backends work across nodes.

use crate::backend::{Backend, BackendConfig, KeepAlive, NodeServer};
use crate::comm::Comm;
use std::path::Path;

/// Whether this rank is the first of its host. Collective.
pub fn leader(comm: &dyn Comm) -> bool {
    let host = rustix::system::uname().nodename().to_bytes().to_vec();
    let all = comm.allgather_bytes(&host);
    all.iter().position(|h| *h == host) == Some(comm.rank())
}

/// The configuration this rank opens `backend` with: under process ranks a
/// backend that would start a server of its own gets the node's one
/// instead, started here by the node's leader (returned with the handle
/// that stops it: drop it only once every rank is done). Collective; fails
/// on every rank if any leader could not start its server.
pub fn backend_config(
    comm: Option<&dyn Comm>,
    backend: Backend,
    dir: &Path,
    cfg: &BackendConfig,
) -> anyhow::Result<(BackendConfig, Option<KeepAlive>)> {
    let Some(comm) = comm.filter(|_| backend.starts_server(cfg)) else {
        return Ok((cfg.clone(), None));
    };
    let host = rustix::system::uname().nodename().to_bytes().to_vec();
    let hosts = comm.allgather_bytes(&host);
    let leader = hosts.iter().position(|h| *h == host).unwrap_or(comm.rank());
    let mut keep_alive = None;
    // Each leader's server as `+encoded`, or `-error`; others send nothing.
    let mine = if leader == comm.rank() {
        match backend.start_server(dir, cfg) {
            Ok((server, k)) => {
                keep_alive = Some(k);
                format!("+{}", server.encode())
            }
            Err(e) => format!("-{e:#}"),
        }
    } else {
        String::new()
    };
    let all = comm.allgather_bytes(mine.as_bytes());
    for (rank, s) in all.iter().enumerate() {
        if let Some(err) = s.strip_prefix(b"-") {
            anyhow::bail!(
                "the {backend} server of {} (rank {rank}): {}",
                String::from_utf8_lossy(&hosts[rank]),
                String::from_utf8_lossy(err)
            );
        }
    }
    let ours = String::from_utf8_lossy(&all[leader]);
    let server = NodeServer::decode(ours.strip_prefix('+').unwrap_or(&ours))?;
    let cfg = BackendConfig {
        node_server: Some(server),
        ..cfg.clone()
    };
    Ok((cfg, keep_alive))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::run_threads;

    #[test]
    fn one_leader_and_one_server_per_host() {
        assert_eq!(run_threads(3, leader), [true, false, false]);
        let dir = tempfile::tempdir().unwrap();
        let cfg = BackendConfig::default();
        let out = run_threads(3, |c| {
            let (cfg, keep) =
                backend_config(Some(c), Backend::RemoteTcp, dir.path(), &cfg).expect("node server");
            let client = cfg.node_server.as_ref().unwrap().connect().unwrap();
            client
                .create_bucket(&format!("bucket{}", c.rank()))
                .unwrap();
            c.barrier();
            let n = client.list_buckets().unwrap().len();
            c.barrier();
            drop(client);
            (cfg.node_server, keep.is_some(), n)
        });
        assert!(out.iter().all(|o| o.0 == out[0].0 && o.2 == 3), "{out:?}");
        let started: Vec<bool> = out.iter().map(|o| o.1).collect();
        assert_eq!(started, [true, false, false]);
        let (cfg, keep) = backend_config(None, Backend::Http, dir.path(), &cfg).unwrap();
        assert!(cfg.node_server.is_none() && keep.is_none());
    }
}
