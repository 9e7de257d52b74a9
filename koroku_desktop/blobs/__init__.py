"""Content-addressed blobs and the attachments stored in them."""
