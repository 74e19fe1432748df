"""What every part of the API builds on, as k8s.io/apimachinery: the Status errors, field validation rules, the
table printers' helpers, pod template defaults, generated names, patches, query flags and admission. It imports
nothing of the twin, so kinds/, validation/, the registry, the store, the streams and the server all stand on it."""
