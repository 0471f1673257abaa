//! Real Linux users for the tests of permissions, shared by
//! the HTTP and RPC transports' tests: three users and a group made for
//! one test (as root with `useradd`; otherwise None, with the reason
//! printed, and the test skips) and removed when dropped, and a data root
//! all of them can reach. Users a and b share a group, c does not.

use s3hpc_store::Identity;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Three users (a, b, c) and a group of a and b, removed when dropped.
pub struct Users {
    pub group: String,
    pub names: Vec<String>,
    pub ids: Vec<Identity>,
}

impl Users {
    /// `tag` tells apart the users of tests running at once in one
    /// process (the pid tells processes apart).
    pub fn make(tag: &str) -> Option<Users> {
        if rustix::process::geteuid().as_raw() != 0 {
            eprintln!("skipped: making Linux users for the test needs root");
            return None;
        }
        if !sh(&["useradd", "--help"]) {
            eprintln!("skipped: no useradd on this machine");
            return None;
        }
        let p = std::process::id() % 100_000;
        let group = format!("s3g{tag}{p}");
        let mut users = Users {
            group: group.clone(),
            names: Vec::new(),
            ids: Vec::new(),
        };
        assert!(sh(&["groupadd", &group]), "groupadd {group}");
        for (i, u) in ["a", "b", "c"].iter().enumerate() {
            let n = format!("s3{tag}{u}{p}");
            let mut cmd = vec!["useradd", "-M", "-U", "-s", "/usr/sbin/nologin"];
            if i < 2 {
                cmd.extend(["-G", &group]);
            }
            cmd.push(&n);
            // Pushed first, so that a failed useradd still removes the rest.
            users.names.push(n.clone());
            assert!(sh(&cmd), "useradd {n}");
        }
        users.ids = (users.names.iter())
            .map(|n| Identity::parse(n).unwrap())
            .collect();
        Some(users)
    }

    /// User `u`'s uid (0-2: a, b, c).
    pub fn uid(&self, u: usize) -> u32 {
        self.ids[u].user().unwrap().uid
    }

    /// User `u`'s primary gid.
    pub fn gid(&self, u: usize) -> u32 {
        self.ids[u].user().unwrap().gid
    }

    /// The gid of the group a and b share.
    pub fn shared_gid(&self) -> u32 {
        let a = &self.ids[0].user().unwrap().groups;
        let c = &self.ids[2].user().unwrap().groups;
        *a.iter()
            .find(|g| !c.contains(g) && **g != self.gid(0))
            .unwrap()
    }
}

impl Drop for Users {
    fn drop(&mut self) {
        for n in &self.names {
            sh(&["userdel", n]);
            sh(&["groupdel", n]);
        }
        sh(&["groupdel", &self.group]);
    }
}

/// Runs a command; whether it succeeded.
pub fn sh(cmd: &[&str]) -> bool {
    Command::new(cmd[0])
        .args(&cmd[1..])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A data root the users can reach: `root` in a fresh directory (under
/// `S3HPC_TEST_DIR` when set, so the tests run on a shared mount), sticky
/// and world-writable like /tmp (anyone makes buckets, each keeps its own).
pub fn data_root() -> (tempfile::TempDir, PathBuf) {
    let dir = match std::env::var_os("S3HPC_TEST_DIR").filter(|d| !d.is_empty()) {
        Some(d) => tempfile::tempdir_in(d),
        None => tempfile::tempdir(),
    }
    .unwrap();
    chmod(dir.path(), 0o755);
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    chmod(&root, 0o1777);
    (dir, root)
}

pub fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The permission bits of `p`.
pub fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}
