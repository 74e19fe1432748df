"""Discovery: the legacy documents (/api, /apis, group versions) with OpenAPI v3, and aggregated discovery."""
