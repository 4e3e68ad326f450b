"""Team budgets: a monthly limit in micro-dollars, what a submission may reserve from it, and
what happens to running jobs when the month's spend crosses it (jobs/budgets/service.py)."""
