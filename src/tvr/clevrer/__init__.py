"""CLEVRER: physics videos of colliding objects, their events and causes, and questions with programs."""
