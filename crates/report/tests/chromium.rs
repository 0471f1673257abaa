//! The page renders in headless Chromium: no console messages, every image
//! decodes, and a screenshot is not blank. Skipped (with the reason printed)
//! only when no Chromium binary exists; `scripts/test` installs Debian's
//! `chromium`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A Chromium run that takes longer than this has hung.
const TIMEOUT: Duration = Duration::from_secs(90);

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("S3HPC_CHROMIUM") {
        return Some(p.into());
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

/// Runs Chromium headless on `page` with `args`; returns (stdout, stderr).
fn run(bin: &Path, profile: &Path, page: &Path, args: &[&str]) -> (String, String) {
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--hide-scrollbars",
            // Deterministic: run the page until it is idle, then stop.
            "--virtual-time-budget=5000",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting chromium");
    // Read both pipes on threads so a chatty Chromium never blocks on a
    // full pipe while we wait.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).ok();
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).ok();
        s
    });
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let (out, err) = (out.join().unwrap(), err.join().unwrap());
            assert!(status.success(), "chromium failed ({status}): {err}");
            return (out, err);
        }
        if start.elapsed() > TIMEOUT {
            child.kill().ok();
            child.wait().ok();
            panic!("chromium did not finish within {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Console messages Chromium logged (`...:CONSOLE(line)] "text", source: ...`).
fn console(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

/// A copy of the page with a script that checks every image after load: a
/// broken one becomes a console error, and the count goes into the DOM.
const IMAGE_CHECK: &str = r#"<script>
window.addEventListener('load', () => {
  const imgs = [...document.images];
  const broken = imgs.filter(i => !i.complete || i.naturalWidth === 0);
  broken.forEach(i => console.error('broken image: ' + i.alt));
  document.body.setAttribute('data-images', imgs.length + ' ' + broken.length);
});
</script></body>"#;

#[test]
fn the_page_renders_in_headless_chromium() {
    let Some(bin) = chromium() else {
        println!("skipped: no chromium on PATH (scripts/test installs Debian's chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let out = dir.path().join("report");
    s3hpc_report::run(
        &[
            fixtures.join("io500-posix-embedded.json"),
            fixtures.join("breadth.json"),
        ],
        &out,
        &mut Vec::new(),
    )
    .unwrap();
    let index = out.join("index.html");
    let profile = dir.path().join("profile");

    // The detector works: a page that logs an error is caught.
    let control = dir.path().join("control.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><p>x</p><script>console.error('control')</script>",
    )
    .unwrap();
    let (_, err) = run(&bin, &profile, &control, &["--dump-dom"]);
    assert!(
        console(&err).iter().any(|l| l.contains("control")),
        "console messages are not detected: {err}"
    );

    // The page itself logs nothing.
    let (_, err) = run(&bin, &profile, &index, &["--dump-dom"]);
    assert_eq!(
        console(&err),
        Vec::<&str>::new(),
        "console messages on the page"
    );

    // Every image decodes.
    let html = std::fs::read_to_string(&index).unwrap();
    let checked = out.join("checked.html");
    std::fs::write(&checked, html.replace("</body>", IMAGE_CHECK)).unwrap();
    let (dom, err) = run(&bin, &profile, &checked, &["--dump-dom"]);
    assert_eq!(console(&err), Vec::<&str>::new(), "broken images");
    let images = html.matches("<img ").count();
    assert!(images >= 5, "{images} images");
    assert!(
        dom.contains(&format!("data-images=\"{images} 0\"")),
        "image check did not run: {dom:.300}"
    );

    // The screenshot is not blank: many colours, and ink beyond the margins.
    let shot = dir.path().join("shot.png");
    run(
        &bin,
        &profile,
        &index,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,2400",
        ],
    );
    let decoder = png::Decoder::new(std::fs::File::open(&shot).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(channels).collect();
    let mut colours: Vec<&[u8]> = pixels.iter().step_by(7).copied().collect();
    colours.sort();
    colours.dedup();
    let ink = pixels
        .iter()
        .filter(|p| p[..3].iter().any(|&c| c < 200))
        .count();
    assert!(
        colours.len() > 50,
        "{} colours: blank screenshot?",
        colours.len()
    );
    assert!(
        ink * 100 > pixels.len(),
        "only {ink} of {} pixels are not near white",
        pixels.len()
    );
}
