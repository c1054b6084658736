//! The codes of distribution through OCI images (`skillfold push`). Declared with
//! [`crate::support::error_code::error_codes!`]; documented in `docs/error-codes.md`.

crate::support::error_code::error_codes! {
    /// Why an image could not be built or written.
    pub enum DistributionCode: "distribution", default Invalid;
    /// Nothing to push: the descriptor (or the agent) approves no bundle.
    NothingToPush = "nothing_to_push",
    /// The output directory exists and is not an OCI image layout (or holds a link or a special
    /// file where the layout's entries belong).
    NotLayout = "not_layout",
    /// The image could not be written (space, permissions).
    WriteFailed = "write_failed" => Retryable,
    /// The registry could not be reached, or answered 5xx.
    RegistryUnavailable = "registry_unavailable" => Retryable,
    /// A pull did not finish within its overall deadline (`--fetch-timeout`).
    PullDeadline = "pull_deadline" => Retryable,
    /// The registry refused the credentials or the access.
    RegistryDenied = "registry_denied",
    /// The registry refused the push otherwise (a bad name, an unsupported request).
    RegistryRefused = "registry_refused",
    /// A layer is not a gzip-compressed tar, or a header is damaged, truncated or read
    /// differently by other tar readers.
    MalformedLayer = "malformed_layer",
    /// A layer inflates past its bound (a tar bomb).
    LayerTooLarge = "layer_too_large",
    /// A layer holds a symbolic or hard link.
    LinkInLayer = "link_in_layer",
    /// A layer holds a device, a FIFO, a sparse file or another entry that is not a file or a
    /// directory.
    SpecialFileInLayer = "special_file_in_layer",
    /// A layer holds an absolute path, a `.` or `..` segment, or a file outside any bundle folder.
    UnsafePathInLayer = "unsafe_path_in_layer",
    /// A layer holds one path twice, or two paths that differ only in case.
    DuplicateInLayer = "duplicate_in_layer",
    /// The registry has no image (or layer) of that digest (yet): retryable, like a commit not
    /// yet on a Git server.
    ImageNotFound = "image_not_found" => Retryable,
    /// The manifest or a layer the registry sent does not have the digest (or size) it is named by.
    DigestMismatch = "digest_mismatch",
    /// The reference is an image index (or a manifest list), not one image.
    ImageIndex = "image_index",
    /// The manifest is not an image manifest we read, or a layer is not a gzip tar.
    MalformedImage = "malformed_image",
    /// The manifest, the layer count or a layer is over its bound.
    ImageTooLarge = "image_too_large",
    /// An approved bundle is not in the image.
    BundleNotInImage = "bundle_not_in_image",
    /// This build has no registry client (built without the `oci` feature).
    OciDisabled = "oci_disabled",
    /// The layers to pull declare more bytes together than the source's pull bound (16 bundles
    /// at the bounds of its limits profile).
    PullTooLarge = "pull_too_large",
    /// A registry spoken to over HTTPS names a plain-HTTP token realm.
    InsecureTokenRealm = "insecure_token_realm",
    /// The tag an `oci` source tracks (or `update --to` names) is not in its repository: like a
    /// branch a Git server does not have, a configuration error.
    TagNotFound = "tag_not_found",
    /// The source's `verify` requires a publisher's signature and the registry holds none for
    /// the pinned manifest digest (no cosign signature tag, no Sigstore bundle referrer).
    ImageUnsigned = "image_unsigned",
    /// The registry holds signatures for the image, and none binds the pinned digest and
    /// verifies under a configured key or identity (each is listed with why).
    ImageSignatureRefused = "image_signature_refused",
    /// The image signature material recorded with a published generation no longer verifies
    /// under the source's `verify` (the keys or identities changed, or the manifest was edited).
    PublisherChanged = "publisher_changed",
    /// The key `push --sign-key` names cannot sign: unreadable, not a cosign or PKCS#8 ECDSA
    /// P-256 private key, `COSIGN_PASSWORD` unset or wrong, key-derivation parameters cosign
    /// never writes; or the output is an OCI layout, which has no tag for a signature.
    SignKeyRefused = "sign_key_refused",
}
