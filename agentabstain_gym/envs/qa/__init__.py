"""AbstainQA-v0: question answering over a generated world of fictional entities, with a search tool."""
