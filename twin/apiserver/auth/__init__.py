"""Who a request is and what it may do: authentication, RBAC authorization, impersonation, escalation
prevention and ClusterRole aggregation."""
