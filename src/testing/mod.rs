//! Fixtures shared by the unit tests (compiled only under `cfg(test)`): what several modules'
//! tests build — bundles on disk, Git repositories, descriptors — written once here. One file per
//! kind of fixture.
pub mod big_skill;
pub mod bundle_dir;
pub mod guides;
pub mod temp_bundle;
