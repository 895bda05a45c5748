"""CoreOS stream lookups.

The host parses the ``coreos-bootimages`` stream once per ConfigMap version
and answers a guest's lookups through a handle (WIT ``boot-image-inputs``),
so no guest parses or holds a stream. A lookup that finds nothing fails
with stream-metadata-go's wording, as the Rust guests' do.
"""


class NotInStream(Exception):
    """A lookup in a well-formed stream that found nothing."""


def no_architecture(stream, arch):
    return NotInStream(f"stream:{stream} does not have architecture '{arch}'")


def no_gcp_image(stream, arch):
    return NotInStream(
        f"stream:{stream} architecture '{arch}' has no GCP image "
        "(images.gcp is missing or incomplete)"
    )
