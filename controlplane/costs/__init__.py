"""Costs: a job's spend, team budgets, the price table in force, estimates and the recommender."""
