"""Indexing jobs for attached sources: the facade surfaces call (`service`), when sources are
refreshed (`schedule`), what runs one job (`runner`, crawling a site in `crawl_job`, or a
connector's `SourceSync`) and the worker that takes queued jobs (`worker`).

A job crawls one attached site, or syncs one connector attachment (Confluence: a
`SourceSync` chosen by the source's kind, see `knowledge.sources.connectors.sync`), into its
index. Each page is ingested as it arrives and recorded with its links, so a job whose
process died resumes without fetching those pages again. Refreshes send the validators of
the pages already indexed (ETag, Last-Modified): unchanged pages cost no download and no
embedding. A page that answers 404/410, or is missing from two complete crawls in a row, is
removed.
"""

from knowledge.sources.jobs.context import JobContext, MakeCrawler, SourceSync
from knowledge.sources.jobs.runner import JobRunner
from knowledge.sources.jobs.schedule import Schedule
from knowledge.sources.jobs.service import IndexInfo, IndexingJobs, site_name
from knowledge.sources.jobs.worker import JobWorker, worker_name

__all__ = [
    "IndexInfo",
    "IndexingJobs",
    "JobContext",
    "JobRunner",
    "JobWorker",
    "MakeCrawler",
    "Schedule",
    "SourceSync",
    "site_name",
    "worker_name",
]
