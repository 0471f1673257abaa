//! Sets the soname (so the file works as `libs3.so.4`) and compiles the
//! layout probe against the crate's own 4.x header (include/libs3.h).

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libs3.so.4");
    println!("cargo:rerun-if-changed=c/layout4.c");
    println!("cargo:rerun-if-changed=include/libs3.h");
    cc::Build::new()
        .file("c/layout4.c")
        .include("include")
        .compile("s3hpc_layout4");
}
