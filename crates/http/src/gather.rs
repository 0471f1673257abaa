//! PUT bodies of a few MiB, gathered into one reused buffer as they arrive.
//!
//! Streaming such a body to a blocking writer kept hyper's chunks alive in a
//! queue, so hyper could not reuse its read buffer: every ~400 KiB it
//! allocated a fresh one, and the kernel zeroed and mapped its pages on
//! first touch (a fifth of the server's CPU time for a 2 MiB PUT), besides
//! the hand-off to the blocking pool. Copied out at once, each chunk frees
//! hyper's buffer for the next read; the copy costs what the streaming
//! reader's copy into the engine's buffer did, and the write then goes in
//! one piece, inline or handed off as `WriteGate` says.

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::sync::Mutex;

/// Bodies up to this long (by their Content-Length) are gathered; longer
/// ones stream through a bounded channel.
pub const GATHER_MAX: usize = 8 << 20;
/// Bodies gathered at once, at most: bounds the memory to 64 MiB whatever
/// the number of connections; beyond it, bodies stream. Also the number of
/// buffers kept for reuse.
const MAX_GATHERED: usize = 8;

#[derive(Default)]
pub(crate) struct BufferPool(Mutex<PoolState>);

#[derive(Default)]
struct PoolState {
    free: Vec<Vec<u8>>,
    in_use: usize,
}

impl BufferPool {
    /// An empty buffer with room for `len` bytes, reused when one is free;
    /// `None` if `len` is too long or enough bodies are gathered already.
    pub fn take(&self, len: usize) -> Option<Pooled<'_>> {
        if len > GATHER_MAX {
            return None;
        }
        let mut state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if state.in_use >= MAX_GATHERED {
            return None;
        }
        state.in_use += 1;
        let mut buf = state.free.pop().unwrap_or_default();
        drop(state);
        buf.clear();
        buf.reserve(len);
        Some(Pooled { pool: self, buf })
    }
}

/// A buffer of the pool, given back when dropped.
pub(crate) struct Pooled<'a> {
    pool: &'a BufferPool,
    pub buf: Vec<u8>,
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        let mut state = self.pool.0.lock().unwrap_or_else(|p| p.into_inner());
        state.in_use -= 1;
        if buf.capacity() <= GATHER_MAX {
            state.free.push(buf);
        }
    }
}

/// Copies `first` and the rest of `body` into `into`.
pub async fn gather<S, E>(into: &mut Pooled<'_>, first: Bytes, mut body: S) -> Result<(), E>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    into.buf.extend_from_slice(&first);
    drop(first);
    while let Some(chunk) = body.next().await {
        into.buf.extend_from_slice(&chunk?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn gathers_chunks_and_reuses_buffers() {
        let pool = BufferPool::default();
        let rest = futures_util::stream::iter(vec![
            Ok::<_, String>(Bytes::from_static(b"cd")),
            Ok(Bytes::from_static(b"e")),
        ]);
        let mut got = pool.take(5).unwrap();
        gather(&mut got, Bytes::from_static(b"ab"), rest)
            .await
            .unwrap();
        assert_eq!(got.buf, b"abcde");
        let ptr = got.buf.as_ptr();
        drop(got);
        let again = pool.take(5).unwrap();
        assert!(again.buf.is_empty());
        assert_eq!(again.buf.as_ptr(), ptr, "the buffer is reused");

        let mut other = pool.take(5).unwrap();
        let failing = futures_util::stream::iter(vec![Err::<Bytes, _>("gone".to_string())]);
        let err = gather(&mut other, Bytes::new(), failing).await;
        assert_eq!(err.unwrap_err(), "gone");
    }

    #[test]
    fn gathers_a_bounded_number_of_bounded_bodies() {
        let pool = BufferPool::default();
        assert!(pool.take(GATHER_MAX + 1).is_none());
        let held: Vec<_> = (0..MAX_GATHERED).map(|_| pool.take(10).unwrap()).collect();
        assert!(pool.take(10).is_none(), "all in use");
        drop(held);
        assert!(pool.take(10).is_some(), "given back on drop");
    }
}
