//! A centre's S3 keys. Users make their own long-lived keys through the
//! node's gateway (which knows them by their Unix socket's peer
//! credentials), every server of a cluster honours them from one shared
//! store within seconds, and jobs get temporary credentials that servers
//! verify without a store lookup ([`session`]).

pub mod session;
mod store;

pub use store::{
    now_secs, Found, KeyInfo, KeyKind, KeyStore, NewKey, Refused, SessionCredentials, KEY_PREFIX,
    MAX_SESSION, SEEN_WITHIN,
};
