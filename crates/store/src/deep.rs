//! Recursion as deep as a tree goes. A key of 1024 bytes can sit 512
//! directories deep (and a POSIX user can nest deeper still), and the walks
//! that recurse once per directory level (listings, version listings, the
//! sweep, a bucket's delete) took more than a server thread's 2 MiB stack
//! there: a stack overflow aborts the whole process. Each level's step runs
//! through [`grow`], which moves on to a new stack segment on the heap when
//! less than [`RED_ZONE`] is left (`stacker`, as rustc does for deeply
//! nested syntax): the common shallow walk pays one comparison per level.

/// The stack a level may still need when it starts: a level's frames take
/// about 2 KiB (4 KiB unoptimised); a thread spawned for lookups from deep
/// in the walk takes its own stack.
const RED_ZONE: usize = 64 * 1024;

/// The size of each new segment: 256 levels or more.
const SEGMENT: usize = 1024 * 1024;

/// Runs `f`, on a new stack segment if this one is nearly used up.
pub(crate) fn grow<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}
