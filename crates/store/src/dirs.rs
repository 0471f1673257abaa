pub struct DirCache;
impl DirCache { pub fn new() -> Self { DirCache } }
