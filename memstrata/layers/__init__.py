"""The memory layers `Memory` composes, one module (or package) each.

    buffer / conversation   the session: recent turns (buffer backend), episode log, rolling summary
    semantic (+ access)     long-term memories: embeddings + full text, search, supersede, history
    entities                people, projects, places per user
    profile                 key/value facts per user
    user_context            the per-user context object updated at session end
    procedures              instructions and few-shot examples, retrieved by task
    learning (+ work_queue) extraction → reconciliation → entities/profile, now or on the durable queue
    context                 one prompt block assembled from every layer within a token budget
    lifecycle/              consolidation, expiry, erasure, export/import

`wiring.build_layers` builds them all from one set of collaborators; nothing else constructs them.
"""
