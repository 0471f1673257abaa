//! Sets the soname (so the file works as `libs3.so.2`) and compiles the
//! layout probe against Debian's real header when it is installed.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libs3.so.2");
    println!("cargo::rustc-check-cfg=cfg(libs3_h)");
    println!("cargo:rerun-if-changed=c/layout2.c");
    let header = std::path::Path::new("/usr/include/libs3.h");
    println!("cargo:rerun-if-changed={}", header.display());
    if header.exists() {
        cc::Build::new()
            .file("c/layout2.c")
            .compile("s3hpc_layout2");
        println!("cargo:rustc-cfg=libs3_h");
    }
}
