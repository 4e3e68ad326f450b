"""Teams: who is in which team with which role, and what each may see and do."""
