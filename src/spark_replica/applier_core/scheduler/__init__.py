"""The scheduling layer of the Change Stream Applier (WL10500.LAYER.1): clocks, dependency
adapters and trackers, schedules, the scheduler and its thread pool.

It knows nothing of databases, transactions or replication (WL10500.LAYER.2): tasks are
objects with ``run(phase, step)``, times are integers, and task ids count from 0 across the
whole stream. It imports only the standard library and the concurrency layer.
"""

from __future__ import annotations

from spark_replica.applier_core.scheduler.adapters import (
    DependencyAdapter as DependencyAdapter,
)
from spark_replica.applier_core.scheduler.adapters import (
    LwmDependencyAdapter as LwmDependencyAdapter,
)
from spark_replica.applier_core.scheduler.adapters import (
    SequentialClockAdapter as SequentialClockAdapter,
)
from spark_replica.applier_core.scheduler.adapters import Solution as Solution
from spark_replica.applier_core.scheduler.clocks import ClockKind as ClockKind
from spark_replica.applier_core.scheduler.clocks import CommitOrderClock as CommitOrderClock
from spark_replica.applier_core.scheduler.clocks import LogicalClock as LogicalClock
from spark_replica.applier_core.scheduler.clocks import LwmClock as LwmClock
from spark_replica.applier_core.scheduler.clocks import SchedulerClock as SchedulerClock
from spark_replica.applier_core.scheduler.scheduler import Scheduler as Scheduler
from spark_replica.applier_core.scheduler.schedules import APPLY_PHASE as APPLY_PHASE
from spark_replica.applier_core.scheduler.schedules import COMMIT_PHASE as COMMIT_PHASE
from spark_replica.applier_core.scheduler.schedules import GLOBAL_CLOCK as GLOBAL_CLOCK
from spark_replica.applier_core.scheduler.schedules import DelayedSchedule as DelayedSchedule
from spark_replica.applier_core.scheduler.schedules import Phase as Phase
from spark_replica.applier_core.scheduler.schedules import Schedule as Schedule
from spark_replica.applier_core.scheduler.schedules import Step as Step
from spark_replica.applier_core.scheduler.schedules import Task as Task
from spark_replica.applier_core.scheduler.schedules import (
    TransactionOrderSchedule as TransactionOrderSchedule,
)
from spark_replica.applier_core.scheduler.status import SchedulerState as SchedulerState
from spark_replica.applier_core.scheduler.status import (
    SchedulerStatistics as SchedulerStatistics,
)
from spark_replica.applier_core.scheduler.status import (
    SchedulerStopped as SchedulerStopped,
)
from spark_replica.applier_core.scheduler.thread_pool import PoolStopped as PoolStopped
from spark_replica.applier_core.scheduler.thread_pool import ThreadPool as ThreadPool
from spark_replica.applier_core.scheduler.trackers import (
    DependencyTracker as DependencyTracker,
)
from spark_replica.applier_core.scheduler.trackers import (
    SinglePredecessorTracker as SinglePredecessorTracker,
)
from spark_replica.applier_core.scheduler.trackers import TrackerStub as TrackerStub

__all__ = [
    "APPLY_PHASE",
    "COMMIT_PHASE",
    "GLOBAL_CLOCK",
    "ClockKind",
    "CommitOrderClock",
    "DelayedSchedule",
    "DependencyAdapter",
    "DependencyTracker",
    "LogicalClock",
    "LwmClock",
    "LwmDependencyAdapter",
    "Phase",
    "PoolStopped",
    "Schedule",
    "Scheduler",
    "SchedulerClock",
    "SchedulerState",
    "SchedulerStatistics",
    "SchedulerStopped",
    "SequentialClockAdapter",
    "SinglePredecessorTracker",
    "Solution",
    "Step",
    "Task",
    "ThreadPool",
    "TrackerStub",
    "TransactionOrderSchedule",
]
