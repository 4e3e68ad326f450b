"""Log entries -> what they mean: the trainers' events and known failures. Pure."""
