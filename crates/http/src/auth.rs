//! Who may use the server: access keys with their secrets, or anonymous
//! access when explicitly asked for.

use s3s::auth::{S3Auth, SecretKey};
use s3s::{s3_error, S3Result};
use std::collections::HashMap;
use std::path::Path;

/// Environment variables that give one user's credentials.
pub const ACCESS_KEY_ENV: &str = "S3HPC_ACCESS_KEY";
pub const SECRET_KEY_ENV: &str = "S3HPC_SECRET_KEY";

/// How requests are authenticated.
#[derive(Clone)]
pub enum AuthConfig {
    /// Every request must be signed (SigV4 or SigV2, header or presigned)
    /// by one of these users.
    Users(HashMap<String, String>),
    /// No signature is checked; every request is served. Only on request.
    Anonymous,
}

impl std::fmt::Debug for AuthConfig {
    // Never print secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthConfig::Users(u) => write!(f, "Users({} access keys)", u.len()),
            AuthConfig::Anonymous => f.write_str("Anonymous"),
        }
    }
}

impl AuthConfig {
    pub fn single(access_key: impl Into<String>, secret_key: impl Into<String>) -> AuthConfig {
        AuthConfig::Users(HashMap::from([(access_key.into(), secret_key.into())]))
    }

    /// The users from `S3HPC_ACCESS_KEY`/`S3HPC_SECRET_KEY`, if both are set.
    pub fn from_env() -> Result<Option<AuthConfig>, String> {
        let get = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
        match (get(ACCESS_KEY_ENV), get(SECRET_KEY_ENV)) {
            (Some(a), Some(s)) => Ok(Some(AuthConfig::single(a, s))),
            (None, None) => Ok(None),
            _ => Err(format!(
                "set both {ACCESS_KEY_ENV} and {SECRET_KEY_ENV}, or neither"
            )),
        }
    }

    /// Reads a credentials file: one user per line, `ACCESS_KEY SECRET_KEY`
    /// (separated by blanks or a colon); blank lines and `#` comments skipped.
    pub fn from_file(path: &Path) -> Result<AuthConfig, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading credentials file {}: {e}", path.display()))?;
        Self::parse_users(&text).map_err(|e| format!("credentials file {}: {e}", path.display()))
    }

    fn parse_users(text: &str) -> Result<AuthConfig, String> {
        let mut users = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut fields = line
                .split(|c: char| c.is_whitespace() || c == ':')
                .filter(|f| !f.is_empty());
            match (fields.next(), fields.next(), fields.next()) {
                (Some(a), Some(s), None) => {
                    if users.insert(a.to_string(), s.to_string()).is_some() {
                        return Err(format!("line {}: access key {a} is listed twice", i + 1));
                    }
                }
                _ => {
                    return Err(format!(
                        "line {}: expected `ACCESS_KEY SECRET_KEY`, got {} fields",
                        i + 1,
                        line.split(|c: char| c.is_whitespace() || c == ':')
                            .filter(|f| !f.is_empty())
                            .count()
                    ))
                }
            }
        }
        if users.is_empty() {
            return Err("no users: add lines of `ACCESS_KEY SECRET_KEY`".into());
        }
        Ok(AuthConfig::Users(users))
    }
}

/// The s3s key lookup. Unlike s3s's `SimpleAuth`, an unknown key answers
/// InvalidAccessKeyId, as S3 does.
pub(crate) struct KeyTable(pub HashMap<String, String>);

#[async_trait::async_trait]
impl S3Auth for KeyTable {
    async fn get_secret_key(&self, access_key: &str) -> S3Result<SecretKey> {
        match self.0.get(access_key) {
            Some(s) => Ok(SecretKey::from(s.as_str())),
            None => Err(s3_error!(
                InvalidAccessKeyId,
                "the access key {access_key} is not known to this server"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_several_users_and_rejects_bad_lines() {
        let AuthConfig::Users(u) =
            AuthConfig::parse_users("# users\nalice s1\n\nbob:s2\n").unwrap()
        else {
            panic!("expected users")
        };
        assert_eq!(u.get("alice").map(String::as_str), Some("s1"));
        assert_eq!(u.get("bob").map(String::as_str), Some("s2"));
        let err = AuthConfig::parse_users("alice\n").err().unwrap();
        assert!(err.contains("line 1"), "{err}");
        assert!(AuthConfig::parse_users("a x\na y\n")
            .err()
            .unwrap()
            .contains("twice"));
        assert!(AuthConfig::parse_users("# nothing\n").is_err());
    }
}
