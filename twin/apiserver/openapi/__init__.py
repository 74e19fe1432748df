"""/openapi/v2: the Swagger 2.0 document, as JSON and as gnostic protobuf."""
