//! Temporary credentials that every server verifies on its own, with no
//! store entry and no lookup per request.
//!
//! The access key carries its claims in the clear: who (uid, gid), when it
//! was issued and when it expires. Its secret and its session token are
//! HMAC-SHA256 of the access key under the store's signing key, so a
//! server re-derives both from the access key alone. Changing any claim
//! (a later expiry, another uid) changes the secret the request must be
//! signed with, which only a holder of the signing key can compute.

use hmac::{KeyInit, Mac};
use sha2::Sha256;

/// The prefix of session access keys (long-lived keys start `S3HK`).
pub const PREFIX: &str = "S3HS";
const VERSION: u8 = 1;
/// Length of the claims: version, origin, uid, gid, issued, expires, nonce.
const CLAIMS_LEN: usize = 2 + 4 * 5;

/// How a session was granted, for the operator's logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `s3hpc creds` over the node's socket: the kernel named the user.
    Socket = 0,
    /// AssumeRoleWithWebIdentity: an OIDC provider's token named the user.
    Oidc = 1,
}

/// What a session access key says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claims {
    pub origin: Origin,
    pub uid: u32,
    pub gid: u32,
    /// Seconds since the epoch (u32: until 2106).
    pub issued: u32,
    pub expires: u32,
    /// Tells apart two sessions of one user issued in the same second.
    pub nonce: u32,
}

impl Claims {
    pub fn access_key(&self) -> String {
        let mut b = [0u8; CLAIMS_LEN];
        b[0] = VERSION;
        b[1] = self.origin as u8;
        for (i, v) in [self.uid, self.gid, self.issued, self.expires, self.nonce]
            .iter()
            .enumerate()
        {
            b[2 + 4 * i..6 + 4 * i].copy_from_slice(&v.to_be_bytes());
        }
        format!("{PREFIX}{}", data_encoding::BASE32_NOPAD.encode(&b))
    }

    /// The claims of a session access key; None for anything else
    /// (a long-lived key, or one that does not decode).
    pub fn parse(access_key: &str) -> Option<Claims> {
        let body = access_key.strip_prefix(PREFIX)?;
        let b = data_encoding::BASE32_NOPAD.decode(body.as_bytes()).ok()?;
        if b.len() != CLAIMS_LEN || b[0] != VERSION {
            return None;
        }
        let word = |i: usize| u32::from_be_bytes(b[2 + 4 * i..6 + 4 * i].try_into().unwrap());
        let origin = match b[1] {
            0 => Origin::Socket,
            1 => Origin::Oidc,
            _ => return None,
        };
        Some(Claims {
            origin,
            uid: word(0),
            gid: word(1),
            issued: word(2),
            expires: word(3),
            nonce: word(4),
        })
    }
}

/// The secret and session token of a session access key.
pub fn derive(signing_key: &[u8], access_key: &str) -> (String, String) {
    let mac = |purpose: &str| {
        let mut m = hmac::Hmac::<Sha256>::new_from_slice(signing_key)
            .expect("HMAC takes keys of any length");
        m.update(purpose.as_bytes());
        m.update(&[0]);
        m.update(access_key.as_bytes());
        data_encoding::BASE64URL_NOPAD.encode(&m.finalize().into_bytes())
    };
    let mut secret = mac("s3hpc session secret");
    secret.truncate(40);
    (secret, mac("s3hpc session token"))
}

/// Compares without leaking where two strings first differ.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_round_trip_and_bind_the_secret() {
        let c = Claims {
            origin: Origin::Socket,
            uid: 1001,
            gid: 100,
            issued: 1_800_000_000,
            expires: 1_800_003_600,
            nonce: 7,
        };
        let ak = c.access_key();
        assert!(ak.starts_with(PREFIX), "{ak}");
        assert!(ak.chars().all(|ch| ch.is_ascii_alphanumeric()), "{ak}");
        assert_eq!(Claims::parse(&ak), Some(c));
        let key = [9u8; 32];
        let (secret, token) = derive(&key, &ak);
        assert_eq!(secret.len(), 40);
        // A longer expiry or another uid is another secret and token.
        for other in [
            Claims {
                expires: c.expires + 3600,
                ..c
            },
            Claims { uid: 0, ..c },
            Claims {
                origin: Origin::Oidc,
                ..c
            },
        ] {
            let (s, t) = derive(&key, &other.access_key());
            assert_ne!(s, secret);
            assert_ne!(t, token);
        }
        // So is another store's signing key.
        assert_ne!(derive(&[8u8; 32], &ak).0, secret);
        assert!(Claims::parse("S3HKABCDEF").is_none());
        assert!(Claims::parse("S3HS!!").is_none());
        assert!(Claims::parse(&format!("{PREFIX}AAAA")).is_none());
        assert!(same(&token, &token.clone()));
        assert!(!same(&token, &secret));
    }
}
