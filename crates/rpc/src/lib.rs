//! The node-local binary RPC transport: S3 calls as small binary frames
//! over a Unix or TCP socket, to a gateway that runs them on the engine.
//! docs/src/reference/rpc-protocol.md specifies the protocol.
//!
//! - [`frame`]: the 16-byte frame header and its bounds;
//! - [`message`]: what requests and replies carry;
//! - [`addr`]: addresses (`unix:PATH`, `tcp:HOST:PORT` or
//!   `s3hpc://HOST:PORT`) and the socket type over both;
//! - [`conn`]: a connection (buffered reads, one write per frame) and the
//!   handshake;
//! - [`body`]: object bodies as a stream of data frames;
//! - [`shm`]: the shared-memory buffer for PUT bodies on one node;
//! - [`server`]: the gateway;
//! - [`client`]: [`RemoteClient`], the `S3Client` over a gateway.

pub mod addr;
pub mod body;
pub mod client;
pub mod conn;
pub mod frame;
#[doc(hidden)]
pub mod fuzz;
pub mod message;
pub mod server;
pub mod shm;

pub use addr::Address;
pub use client::RemoteClient;
pub use server::{ClientFor, Gateway, GatewayOptions, Peer};
