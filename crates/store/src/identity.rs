//! Who a request acts as: a POSIX user (uid, gid, supplementary groups),
//! whose rights the kernel checks on every file-system call, or the server
//! itself (the administrator).
//!
//! The switch is per thread. Linux keeps credentials per thread, and the
//! raw system calls `setresuid`, `setresgid` and `setgroups` change only the
//! calling one; glibc's wrappers of the same names signal every thread of
//! the process to change them all, so they are never used here. A switch
//! lasts one synchronous engine call ([`crate::Acting`]) and its uid and
//! gid are undone before that returns, so it is never held across an
//! `.await` nor seen by the next request on the thread; the supplementary
//! groups are set only when a call needs others than the thread holds. Only the effective ids move (the real
//! and saved ones stay the server's), so switching back needs no
//! capability; and moving the effective uid from 0 to another clears the
//! thread's effective capabilities (capabilities(7)), so a thread acting as
//! a user bypasses no permission check: the kernel decides as it would for
//! any process of that user. The effective ids also set the file-system
//! ids, so what the user creates is the user's from the start.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A POSIX user as the kernel sees one: the ids its processes run with.
#[derive(Debug, PartialEq, Eq)]
pub struct User {
    /// The name in the user database, or the uid when it has none.
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// Supplementary groups, as `getgrouplist` gives them (the primary
    /// group included), sorted.
    pub groups: Vec<u32>,
    /// Tells apart the per-thread caches (directory handles, listings) of
    /// different users: what one user opened never serves another.
    id: u64,
}

/// Who a call acts as: a [`User`], or the server itself (the administrator:
/// whatever the server process may do).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identity(Option<Arc<User>>);

impl Identity {
    /// The server's own identity: no switch.
    pub fn server() -> Identity {
        Identity(None)
    }

    pub fn user(&self) -> Option<&User> {
        self.0.as_deref()
    }

    pub fn is_server(&self) -> bool {
        self.0.is_none()
    }

    /// A user with these ids and groups.
    pub fn from_ids(name: String, uid: u32, gid: u32, mut groups: Vec<u32>) -> Identity {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        groups.sort_unstable();
        groups.dedup();
        Identity(Some(Arc::new(User {
            name,
            uid,
            gid,
            groups,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        })))
    }

    /// The user a credentials file or a command line names: a name from the
    /// user database, or `UID:GID`. Either may end in `!`, which is how uid
    /// 0 must be written (`root!`, `0:0!`): acting as root is never an
    /// accident of a typo. Groups come from the user database
    /// (`getgrouplist`), once, here.
    pub fn parse(spec: &str) -> Result<Identity, String> {
        let (spec, root_ok) = match spec.strip_suffix('!') {
            Some(s) => (s, true),
            None => (spec, false),
        };
        let ids = spec
            .split_once(':')
            .and_then(|(u, g)| Some((u.parse::<u32>().ok()?, g.parse::<u32>().ok()?)));
        let (name, uid, gid) = match ids {
            Some((uid, gid)) => {
                let name = passwd_by_uid(uid).map_or_else(|| uid.to_string(), |p| p.0);
                (name, uid, gid)
            }
            None => {
                let (uid, gid) = passwd_by_name(spec).ok_or_else(|| {
                    format!(
                        "user {spec:?} is not in the user database (getpwnam); give a known \
                         name or UID:GID"
                    )
                })?;
                (spec.to_string(), uid, gid)
            }
        };
        if uid == 0 && !root_ok {
            return Err(format!(
                "user {spec:?} is uid 0 (root), which bypasses every permission; write \
                 `{spec}!` to mean it, or leave the field out for the server's own identity"
            ));
        }
        let groups = group_list(&name, gid);
        Ok(Identity::from_ids(name, uid, gid, groups))
    }

    /// The user with `uid` and primary group `gid` (a Unix socket's peer),
    /// its groups from the user database; cached for a minute, so a
    /// connection costs no lookup while a change to the groups is seen
    /// soon. The server's own uid, and root, act as the server.
    pub fn of_peer(uid: u32, gid: u32) -> Identity {
        const FRESH: Duration = Duration::from_secs(60);
        type Peers = HashMap<(u32, u32), (Instant, Identity)>;
        static PEERS: OnceLock<Mutex<Peers>> = OnceLock::new();
        if uid == 0 || uid == server().uid {
            return Identity::server();
        }
        let peers = PEERS.get_or_init(Default::default);
        if let Some((at, id)) = peers.lock().expect("not poisoned").get(&(uid, gid)) {
            if at.elapsed() < FRESH {
                return id.clone();
            }
        }
        let name = passwd_by_uid(uid).map(|p| p.0);
        let groups = match &name {
            Some(n) => group_list(n, gid),
            None => vec![gid],
        };
        let id = Identity::from_ids(name.unwrap_or_else(|| uid.to_string()), uid, gid, groups);
        let mut peers = peers.lock().expect("not poisoned");
        if peers.len() >= 4096 {
            peers.clear();
        }
        peers.insert((uid, gid), (Instant::now(), id.clone()));
        id
    }

    /// Runs `f` on this thread as this identity (what a process of that
    /// user would do: tests use it to connect to a gateway as the user).
    pub fn act<T>(&self, f: impl FnOnce() -> T) -> std::io::Result<T> {
        let _switched = enter(self)?;
        Ok(f())
    }

    /// For messages: `user alice (uid 1001)`, or `the server`.
    pub fn describe(&self) -> String {
        match &self.0 {
            Some(u) => format!("user {} (uid {})", u.name, u.uid),
            None => "the server".into(),
        }
    }
}

/// The uid the server runs as: whom an administrator key acts as.
pub fn server_uid() -> u32 {
    server().uid
}

/// The name of `uid` in the user database, if it has one (a lookup each
/// call: callers cache).
pub fn user_name(uid: u32) -> Option<String> {
    passwd_by_uid(uid).map(|p| p.0)
}

/// The ids the server itself runs with, read once (on a thread acting as
/// no one, so they are the process's).
struct ServerIds {
    uid: u32,
    gid: u32,
    groups: Vec<u32>,
}

fn server() -> &'static ServerIds {
    static IDS: OnceLock<ServerIds> = OnceLock::new();
    IDS.get_or_init(|| {
        debug_assert_eq!(ACTING.get(), 0);
        // SAFETY: plain system calls filling a buffer of the size given.
        let groups = unsafe {
            let n = libc::getgroups(0, std::ptr::null_mut()).max(0);
            let mut g = vec![0; n as usize];
            let got = libc::getgroups(n, g.as_mut_ptr());
            g.truncate(got.max(0) as usize);
            g.sort_unstable();
            g
        };
        ServerIds {
            // SAFETY: these cannot fail.
            uid: unsafe { libc::geteuid() },
            gid: unsafe { libc::getegid() },
            groups,
        }
    })
}

thread_local! {
    /// Whom this thread acts as: a user's cache id, or 0 for the server.
    static ACTING: Cell<u64> = const { Cell::new(0) };
    /// Whose supplementary groups this thread holds (0: the server's;
    /// `u64::MAX`: unknown, mid-switch).
    static GROUPS: Cell<u64> = const { Cell::new(0) };
    /// The user this thread acts as is left from a call that has ended
    /// ([`hold`]): the next call as anyone else switches away from it.
    static HELD: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread's credentials were checked against the
    /// server's ([`thread_start`]).
    static SETTLED: Cell<bool> = const { Cell::new(false) };
}

/// Puts a new thread's credentials back to the server's. A thread starts
/// with the credentials of the thread that created it (clone(2) copies
/// them), so one created by a thread acting as a user is that user
/// without knowing it. Called once per thread, before its first switch,
/// and by thread pools when a thread starts (the HTTP server's runtime).
pub fn thread_start() {
    if SETTLED.replace(true) {
        return;
    }
    let me = server();
    // SAFETY: these cannot fail.
    let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if euid != me.uid || egid != me.gid {
        restore_ids(me, true);
        // Its groups are the creator's: set the right ones before a call.
        GROUPS.set(u64::MAX);
    } else if ACTING.get() == 0 && current_groups() != me.groups {
        // A user with the server's own uid and gid, but other groups. A
        // process that cannot set groups never switched, and keeps its own
        // (the error).
        let _ = set_groups(&me.groups);
    }
}

/// The calling thread's supplementary groups, sorted.
fn current_groups() -> Vec<u32> {
    // SAFETY: plain system calls filling a buffer of the size given.
    let mut g = unsafe {
        let n = libc::getgroups(0, std::ptr::null_mut()).max(0);
        let mut g = vec![0; n as usize];
        let got = libc::getgroups(n, g.as_mut_ptr());
        g.truncate(got.max(0) as usize);
        g
    };
    g.sort_unstable();
    g
}

/// The cache id of whom the calling thread acts as (0: the server), for
/// caches of what the kernel let that identity open.
pub(crate) fn acting_id() -> u64 {
    ACTING.get()
}

/// Whether the calling thread acts as a user, not as the server.
pub(crate) fn acting_as_user() -> bool {
    ACTING.get() != 0
}

/// While alive, the thread acts as a user; dropping it switches back.
/// `gid`: whether the effective gid moved too.
pub(crate) struct Switched {
    gid: bool,
}

/// Makes the calling thread act as `who` until the returned guard drops.
/// Nothing to do for the server, nor when the thread already acts as
/// `who` (a call inside a call).
pub(crate) fn enter(who: &Identity) -> std::io::Result<Option<Switched>> {
    let me = server();
    thread_start();
    if HELD.get() {
        if who.user().is_some_and(|u| u.id == ACTING.get()) {
            // Already this user, from an earlier call: nothing to do, and
            // the thread stays held after this one.
            return Ok(None);
        }
        release();
    }
    // The server's identity is no switch: the thread stays whoever it is
    // (a process embedding the engine, or a thread already acting as a
    // user, gets no more than it had). Only a user's groups, left from an
    // earlier call, go first.
    let Some(user) = who.user() else {
        if ACTING.get() == 0 && GROUPS.get() != 0 {
            set_groups(&me.groups).unwrap_or_else(|e| cannot_return(e));
            GROUPS.set(0);
        }
        return Ok(None);
    };
    match ACTING.get() {
        id if id == user.id => return Ok(None),
        0 => {}
        _ => {
            return Err(std::io::Error::other(
                "a call as one user inside a call as another",
            ))
        }
    }
    let switch = || -> std::io::Result<()> {
        if GROUPS.get() != user.id {
            GROUPS.set(u64::MAX);
            set_groups(&user.groups)?;
            GROUPS.set(user.id);
        }
        if user.gid != me.gid {
            set_egid(user.gid)?;
        }
        set_euid(user.uid)
    };
    if let Err(e) = switch() {
        restore_ids(me, true);
        if GROUPS.get() != 0 {
            set_groups(&me.groups).unwrap_or_else(|e| cannot_return(e));
            GROUPS.set(0);
        }
        return Err(e);
    }
    ACTING.set(user.id);
    Ok(Some(Switched {
        gid: user.gid != me.gid,
    }))
}

/// Makes the calling thread act as `who` for a call and leaves it so
/// afterwards, until a call as another identity switches it: for threads
/// that serve request after request and do no file-system work of their
/// own between them (a gateway's session, the HTTP server's workers), so
/// a run of calls by one user pays one switch, not two system calls each
/// way per call. The returned guard marks the call's end.
pub(crate) fn hold(who: &Identity) -> std::io::Result<Held> {
    if let Some(switched) = enter(who)? {
        // Undone by the next call as someone else ([`release`]), not here.
        std::mem::forget(switched);
    }
    HELD.set(false);
    Ok(Held)
}

/// While alive, a call started by [`hold`] runs: a call as anyone else
/// inside it is refused as in [`enter`]; when it ends the thread stays the
/// user it acts as, held.
pub(crate) struct Held;

impl Drop for Held {
    fn drop(&mut self) {
        HELD.set(ACTING.get() != 0);
    }
}

/// Switches a thread that holds a user back to the server's uid and gid
/// (its groups stay until a call needs others, as after any call).
fn release() {
    restore_ids(server(), true);
    ACTING.set(0);
    HELD.set(false);
}

/// Makes the calling thread the server again if it holds a user from an
/// earlier call: for a thread about to do file-system work of its own.
pub fn release_held() {
    if HELD.get() {
        release();
    }
}

impl Drop for Switched {
    fn drop(&mut self) {
        restore_ids(server(), self.gid);
        ACTING.set(0);
    }
}

/// Back to the server's uid and gid: the uid first (its saved uid lets
/// it, and with uid 0 the capabilities to set the gid come back). The
/// supplementary groups stay until the next call needs others (`GROUPS`):
/// one system call less per call, and the thread's own uid is back, so
/// for a root server they change nothing (its capabilities pass every
/// check), and the server's own calls set its groups first.
fn restore_ids(me: &ServerIds, gid: bool) {
    let back = set_euid(me.uid).and_then(|()| if gid { set_egid(me.gid) } else { Ok(()) });
    if let Err(e) = back {
        cannot_return(e)
    }
}

/// The kernel refused a thread its own saved ids: nothing the server does
/// afterwards could be trusted to act as the right one.
fn cannot_return(e: std::io::Error) -> ! {
    eprintln!("s3hpc: cannot switch a thread back to the server's own ids: {e}; stopping");
    std::process::abort();
}

fn check(r: libc::c_long) -> std::io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// `setresuid(-1, uid, -1)` of this thread only (the raw system call).
fn set_euid(uid: u32) -> std::io::Result<()> {
    const KEEP: libc::c_uint = libc::c_uint::MAX;
    // SAFETY: a system call with integer arguments.
    check(unsafe { libc::syscall(libc::SYS_setresuid, KEEP, uid as libc::c_uint, KEEP) })
}

/// `setresgid(-1, gid, -1)` of this thread only.
fn set_egid(gid: u32) -> std::io::Result<()> {
    const KEEP: libc::c_uint = libc::c_uint::MAX;
    // SAFETY: a system call with integer arguments.
    check(unsafe { libc::syscall(libc::SYS_setresgid, KEEP, gid as libc::c_uint, KEEP) })
}

/// `setgroups` of this thread only.
fn set_groups(groups: &[u32]) -> std::io::Result<()> {
    // SAFETY: the kernel reads `groups.len()` gids from the slice.
    check(unsafe { libc::syscall(libc::SYS_setgroups, groups.len(), groups.as_ptr()) })
}

/// The uid and primary gid of user `name`, from the user database.
fn passwd_by_name(name: &str) -> Option<(u32, u32)> {
    let c = CString::new(name).ok()?;
    // SAFETY: getpwnam_r fills `pw` with pointers into `buf`, both alive here.
    passwd(|pw, buf, out| unsafe {
        libc::getpwnam_r(c.as_ptr(), pw, buf.as_mut_ptr(), buf.len(), out)
    })
    .map(|(_, uid, gid)| (uid, gid))
}

/// The name and primary gid of `uid`, from the user database.
fn passwd_by_uid(uid: u32) -> Option<(String, u32)> {
    // SAFETY: as in `passwd_by_name`.
    passwd(|pw, buf, out| unsafe { libc::getpwuid_r(uid, pw, buf.as_mut_ptr(), buf.len(), out) })
        .map(|(name, _, gid)| (name, gid))
}

type PasswdCall<'a> =
    dyn FnMut(*mut libc::passwd, &mut [libc::c_char], *mut *mut libc::passwd) -> libc::c_int + 'a;

fn passwd(
    mut call: impl FnMut(*mut libc::passwd, &mut [libc::c_char], *mut *mut libc::passwd) -> libc::c_int,
) -> Option<(String, u32, u32)> {
    let call: &mut PasswdCall<'_> = &mut call;
    let mut size = 1024;
    loop {
        let mut buf = vec![0 as libc::c_char; size];
        // SAFETY: an all-zero passwd is a valid value to be overwritten.
        let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
        let mut out = std::ptr::null_mut();
        match call(&mut pw, &mut buf, &mut out) {
            libc::ERANGE if size < 1 << 20 => size *= 4,
            0 if !out.is_null() => {
                // SAFETY: on success pw_name points to a C string in `buf`.
                let name = unsafe { CStr::from_ptr(pw.pw_name) };
                return Some((name.to_string_lossy().into_owned(), pw.pw_uid, pw.pw_gid));
            }
            _ => return None,
        }
    }
}

/// The groups of user `name` with primary group `gid`, as login gives them.
fn group_list(name: &str, gid: u32) -> Vec<u32> {
    let Ok(c) = CString::new(name) else {
        return vec![gid];
    };
    let mut n: libc::c_int = 64;
    loop {
        let mut groups = vec![0 as libc::gid_t; n as usize];
        let mut got = n;
        // SAFETY: the buffer holds `got` gids; getgrouplist writes at most
        // that many and says how many there are.
        let r = unsafe { libc::getgrouplist(c.as_ptr(), gid, groups.as_mut_ptr(), &mut got) };
        if r >= 0 {
            groups.truncate(got.max(0) as usize);
            return groups;
        }
        if got <= n || n > 1 << 16 {
            return vec![gid];
        }
        n = got;
    }
}

/// Capability numbers (linux/capability.h).
const CAP_CHOWN: u32 = 0;
const CAP_DAC_OVERRIDE: u32 = 1;
const CAP_DAC_READ_SEARCH: u32 = 2;
const CAP_FOWNER: u32 = 3;
const CAP_FSETID: u32 = 4;
const CAP_SETGID: u32 = 6;
const CAP_SETUID: u32 = 7;

/// Whether this process can act as its users: it must hold CAP_SETUID and
/// CAP_SETGID, and, when it does not run as root, none of the capabilities
/// that bypass permission checks (the kernel clears those from a thread
/// only when its uid leaves 0, so a non-root server would keep them while
/// acting as a user). Says what is missing and how to give it.
pub fn check_can_switch() -> Result<(), String> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| format!("reading /proc/self/status for the capabilities: {e}"))?;
    let eff = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .ok_or("no CapEff line in /proc/self/status")?;
    let has = |cap: u32| eff & (1 << cap) != 0;
    if !has(CAP_SETUID) || !has(CAP_SETGID) {
        return Err(format!(
            "keys mapped to users need the capabilities CAP_SETUID and CAP_SETGID to act as \
             them (uid {} has{}{}); run as root, or give them (systemd: \
             AmbientCapabilities=CAP_SETUID CAP_SETGID), or map no key to a user",
            server().uid,
            if has(CAP_SETUID) {
                ""
            } else {
                " no CAP_SETUID"
            },
            if has(CAP_SETGID) {
                ""
            } else {
                " no CAP_SETGID"
            },
        ));
    }
    let bypass = [
        (CAP_CHOWN, "CAP_CHOWN"),
        (CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE"),
        (CAP_DAC_READ_SEARCH, "CAP_DAC_READ_SEARCH"),
        (CAP_FOWNER, "CAP_FOWNER"),
        (CAP_FSETID, "CAP_FSETID"),
    ];
    let kept: Vec<&str> = bypass.iter().filter(|c| has(c.0)).map(|c| c.1).collect();
    if server().uid != 0 && !kept.is_empty() {
        return Err(format!(
            "running as uid {} with {}: a thread keeps those while acting as a user, so \
             users could pass each other's permissions; give the server only CAP_SETUID \
             and CAP_SETGID, or run it as root",
            server().uid,
            kept.join(", ")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The effective uid and gid of the calling thread.
    fn ids() -> (u32, u32) {
        // SAFETY: these cannot fail.
        unsafe { (libc::geteuid(), libc::getegid()) }
    }

    /// A thread acting as a user, held between calls: a new thread it
    /// starts is that user until `thread_start` puts it back; a call as
    /// another user, or as the server, switches away from the held one.
    #[test]
    fn held_users_and_new_threads() {
        if ids().0 != 0 {
            eprintln!("skipped: switching users needs root");
            return;
        }
        let (a, b) = (
            Identity::from_ids("a".into(), 4243, 4244, vec![4244, 4245]),
            Identity::from_ids("b".into(), 4246, 4247, vec![4247]),
        );
        std::thread::spawn(move || {
            drop(hold(&a).unwrap());
            assert_eq!(ids(), (4243, 4244));
            assert_eq!(current_groups(), vec![4244, 4245]);
            // Lookups of a listing run on threads the caller starts.
            let child = std::thread::spawn(|| {
                let inherited = ids();
                thread_start();
                (inherited, ids(), GROUPS.get())
            });
            let (inherited, settled, groups) = child.join().unwrap();
            assert_eq!(inherited, (4243, 4244));
            assert_eq!(settled, (0, 0));
            assert_eq!(
                groups,
                u64::MAX,
                "the inherited groups are not the server's"
            );
            // Still a, held: the same user again switches nothing.
            assert!(enter(&a).unwrap().is_none());
            b.act(|| assert_eq!(ids(), (4246, 4247))).unwrap();
            assert_eq!(ids(), (0, 0));
            drop(hold(&a).unwrap());
            drop(hold(&Identity::server()).unwrap());
            assert_eq!(ids(), (0, 0));
            assert_eq!(current_groups(), server().groups);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn parses_users() {
        let e = Identity::parse("0:0").unwrap_err();
        assert!(e.contains("0:0!"), "{e}");
        assert!(Identity::parse("root").unwrap_err().contains("root!"));
        let root = Identity::parse("root!").unwrap();
        assert_eq!(root.user().map(|u| (u.uid, u.gid)), Some((0, 0)));
        let u = Identity::parse("4242:4343").unwrap();
        let u = u.user().unwrap();
        assert_eq!((u.uid, u.gid), (4242, 4343));
        assert_eq!(u.groups, vec![4343]);
        assert!(Identity::parse("no-such-user-s3hpc")
            .unwrap_err()
            .contains("not in the user database"));
        assert!(Identity::server().is_server());
        assert_ne!(
            Identity::parse("7:7").unwrap(),
            Identity::parse("7:7").unwrap()
        );
    }
}
