"""The registry of resource types (resources), with each kind's defaulting, selectors and table columns, built from
kinds/ and validation/; the store keeps objects of these types and the API server serves them."""
