//! `s3hpc keys` and `s3hpc creds`: a user's own S3 keys and a job's
//! temporary credentials, from the node's gateway. The gateway knows the
//! caller by its Unix socket's peer credentials: there is nothing to log
//! in with, and nothing a user can claim to be.

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use s3hpc_keys::{KeyInfo, SessionCredentials};
use s3hpc_rpc::message::{Request, Response};
use s3hpc_rpc::RemoteClient;
use std::borrow::Cow;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where the node's gateway listens when nothing says otherwise: the
/// socket of the systemd unit in examples/systemd.
const DEFAULT_SOCKET: &str = "/run/s3hpc/gateway.sock";
/// A session's length outside a Slurm job.
const DEFAULT_SESSION: Duration = Duration::from_secs(3600);

#[derive(Args)]
pub struct SocketArgs {
    /// The node's gateway: the Unix socket of `s3hpc serve --rpc unix:PATH
    /// --key-store DIR`.
    #[arg(long, env = "S3HPC_SOCKET", default_value = DEFAULT_SOCKET)]
    socket: PathBuf,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// `export AWS_...=...` lines for a shell: eval "$(s3hpc creds)".
    Env,
    /// A section of ~/.aws/credentials (profile s3hpc).
    AwsConfig,
}

#[derive(Subcommand)]
pub enum KeysCommand {
    /// Make a key of your own (your uid, as the kernel tells the gateway)
    /// and print it. The secret is shown this once.
    Create {
        /// Valid for this long (30d, 12h); default: until revoked.
        #[arg(long, value_parser = humantime::parse_duration)]
        expires: Option<Duration>,
        #[arg(long, value_enum, default_value = "env")]
        format: Format,
        #[command(flatten)]
        socket: SocketArgs,
    },
    /// Your keys (root and the server's user: everyone's, or --user's),
    /// with when each was last used.
    List {
        /// A user name or uid.
        #[arg(long)]
        user: Option<String>,
        #[command(flatten)]
        socket: SocketArgs,
    },
    /// Revoke one of your keys, or with --all every key of yours (or of
    /// --user, for root) and every session issued so far. Every server
    /// refuses them within seconds.
    Revoke {
        /// The access key.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        key: Option<String>,
        #[arg(long)]
        all: bool,
        /// With --all: another user's (root and the server's user only).
        #[arg(long, requires = "all")]
        user: Option<String>,
        #[command(flatten)]
        socket: SocketArgs,
    },
}

#[derive(Args)]
pub struct CredsArgs {
    /// How long the credentials last (3s, 2h, at most 7d). Default: the
    /// Slurm job's remaining time inside a job (SLURM_JOB_ID), else 1h.
    #[arg(long, value_parser = humantime::parse_duration)]
    duration: Option<Duration>,
    #[arg(long, value_enum, default_value = "env")]
    format: Format,
    #[command(flatten)]
    socket: SocketArgs,
}

fn gateway(s: &SocketArgs) -> anyhow::Result<RemoteClient> {
    RemoteClient::connect(&format!("unix:{}", s.socket.display())).with_context(|| {
        format!(
            "reaching the node's gateway at {} (give --socket or S3HPC_SOCKET)",
            s.socket.display()
        )
    })
}

fn call(s: &SocketArgs, req: Request<'_>) -> anyhow::Result<Response> {
    let name = req.name();
    gateway(s)?
        .key_request(&req)
        .map_err(|e| anyhow::anyhow!("{name}: {e}"))
}

fn unexpected(r: Response) -> anyhow::Error {
    anyhow::anyhow!("the gateway answered {r:?}; is it the same s3hpc version?")
}

fn uid_of(user: &str) -> anyhow::Result<u32> {
    if let Ok(uid) = user.parse::<u32>() {
        return Ok(uid);
    }
    let who = s3hpc_store::Identity::parse(&format!("{user}!")).map_err(anyhow::Error::msg)?;
    Ok(who.user().map_or(0, |u| u.uid))
}

pub fn keys(cmd: KeysCommand) -> anyhow::Result<()> {
    match cmd {
        KeysCommand::Create {
            expires,
            format,
            socket,
        } => {
            let req = Request::KeyCreate {
                valid_secs: expires.map(|d| d.as_secs().max(1)),
            };
            let Response::NewKey(k) = call(&socket, req)? else {
                anyhow::bail!("unexpected answer to KeyCreate");
            };
            let until = k
                .expires
                .map_or("until revoked".into(), |t| format!("until {}", time(t)));
            crate::say!("# a new key, valid {until}; its secret is shown only now");
            print!("{}", credentials(format, &k.access_key, &k.secret, None));
            Ok(())
        }
        KeysCommand::List { user, socket } => {
            let uid = user.as_deref().map(uid_of).transpose()?;
            match call(&socket, Request::KeyList { uid })? {
                Response::Keys(keys) => {
                    print!("{}", table(&keys));
                    Ok(())
                }
                other => Err(unexpected(other)),
            }
        }
        KeysCommand::Revoke {
            key,
            all,
            user,
            socket,
        } => {
            if all {
                let uid = user.as_deref().map(uid_of).transpose()?;
                match call(&socket, Request::KeyRevokeAll { uid })? {
                    Response::Keys(keys) => {
                        println!(
                            "revoked {} key(s) and every session issued so far",
                            keys.len()
                        );
                        Ok(())
                    }
                    other => Err(unexpected(other)),
                }
            } else {
                let key = key.expect("clap requires KEY without --all");
                call(
                    &socket,
                    Request::KeyRevoke {
                        access_key: Cow::Borrowed(&key),
                    },
                )?;
                println!("revoked {key}");
                Ok(())
            }
        }
    }
}

pub fn creds(a: CredsArgs) -> anyhow::Result<()> {
    let duration = match a.duration {
        Some(d) => d,
        None => slurm_time_left().unwrap_or(DEFAULT_SESSION),
    };
    let req = Request::SessionCreate {
        valid_secs: duration.as_secs().max(1),
    };
    let Response::Session(SessionCredentials {
        access_key,
        secret,
        token,
        expires,
    }) = call(&a.socket, req)?
    else {
        anyhow::bail!("unexpected answer to SessionCreate");
    };
    crate::say!("# temporary credentials, valid until {}", time(expires));
    print!(
        "{}",
        credentials(a.format, &access_key, &secret, Some(&token))
    );
    Ok(())
}

fn credentials(format: Format, access_key: &str, secret: &str, token: Option<&str>) -> String {
    match format {
        Format::Env => {
            let mut s = format!(
                "export AWS_ACCESS_KEY_ID={access_key}\nexport AWS_SECRET_ACCESS_KEY={secret}\n"
            );
            match token {
                Some(t) => s.push_str(&format!("export AWS_SESSION_TOKEN={t}\n")),
                // A session token left from `s3hpc creds` would be sent
                // with the new key, and refused.
                None => s.push_str("unset AWS_SESSION_TOKEN\n"),
            }
            s
        }
        Format::AwsConfig => {
            let mut s = format!(
                "[s3hpc]\naws_access_key_id = {access_key}\naws_secret_access_key = {secret}\n"
            );
            if let Some(t) = token {
                s.push_str(&format!("aws_session_token = {t}\n"));
            }
            s
        }
    }
}

fn time(secs: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(secs)).to_string()
}

fn table(keys: &[KeyInfo]) -> String {
    let mut out = format!(
        "{:<22} {:>8} {:<12} {:<20} {:<20} {:<20}\n",
        "ACCESS_KEY", "UID", "USER", "CREATED", "EXPIRES", "LAST_USED"
    );
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for k in keys {
        let user = s3hpc_store::identity::user_name(k.uid).unwrap_or_else(|| "-".into());
        let expires = match k.expires {
            None => "never".into(),
            Some(t) if t <= now => format!("expired {}", time(t)),
            Some(t) => time(t),
        };
        out.push_str(&format!(
            "{:<22} {:>8} {:<12} {:<20} {:<20} {:<20}\n",
            k.access_key,
            k.uid,
            user,
            time(k.created),
            expires,
            k.last_used.map_or("never".into(), time)
        ));
    }
    out
}

/// The time left of the Slurm job this runs in: `squeue -h -j ID -o %L`
/// prints it as [D-]HH:MM:SS, MM:SS, or UNLIMITED.
fn slurm_time_left() -> Option<Duration> {
    let job = std::env::var("SLURM_JOB_ID").ok()?;
    let out = std::process::Command::new("squeue")
        .args(["-h", "-j", &job, "-o", "%L"])
        .output()
        .ok()?;
    let left = parse_slurm_time(String::from_utf8_lossy(&out.stdout).trim())?;
    Some(left.min(s3hpc_keys::MAX_SESSION))
}

fn parse_slurm_time(s: &str) -> Option<Duration> {
    if s == "UNLIMITED" || s == "INVALID" {
        return (s == "UNLIMITED").then_some(s3hpc_keys::MAX_SESSION);
    }
    let (days, rest) = match s.split_once('-') {
        Some((d, r)) => (d.parse::<u64>().ok()?, r),
        None => (0, s),
    };
    let parts: Vec<u64> = rest
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let secs = match parts[..] {
        [h, m, s] => h * 3600 + m * 60 + s,
        [m, s] => m * 60 + s,
        [s] => s,
        _ => return None,
    };
    Some(Duration::from_secs(days * 86400 + secs)).filter(|d| !d.is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_times() {
        assert_eq!(parse_slurm_time("1:02:03"), Some(Duration::from_secs(3723)));
        assert_eq!(
            parse_slurm_time("2-00:00:10"),
            Some(Duration::from_secs(2 * 86400 + 10))
        );
        assert_eq!(parse_slurm_time("05:00"), Some(Duration::from_secs(300)));
        assert_eq!(parse_slurm_time("UNLIMITED"), Some(s3hpc_keys::MAX_SESSION));
        assert_eq!(parse_slurm_time("0:00"), None);
        assert_eq!(parse_slurm_time(""), None);
        assert_eq!(parse_slurm_time("x:1"), None);
    }
}
