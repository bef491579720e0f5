"""The review queue: screenings waiting for a person, and what the person decided.

enqueue.py puts outcomes in the queue (every needs_review, a random audit sample of the
rest) in the transaction that records them; service.py is the reviewers' side (list, read,
claim, release, decide, reopen), called by the API and the reviewer web page alike;
export.py writes the decisions as a labelled dataset.
"""
