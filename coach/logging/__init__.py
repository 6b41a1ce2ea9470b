"""Run reporting: TensorBoard, progress.csv, console and log.txt."""

from coach.logging.experiment_logger import CSV_COLUMNS, AgentLogger, ExperimentLogger

__all__ = ["CSV_COLUMNS", "AgentLogger", "ExperimentLogger"]
