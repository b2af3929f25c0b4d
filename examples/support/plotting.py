"""Shared by the examples: loss curves saved as PNGs when matplotlib is installed (`pip install tapeshim[plots]`)."""


def save_loss_curve(losses, name, xlabel):
    """Saves the loss curve as a PNG when matplotlib is installed (`pip install tapeshim[plots]`).

    The picture goes to $TAPESHIM_PLOT_DIR, or tapeshim_plots/ in the temp directory; nothing is printed.
    """
    try:
        import matplotlib
    except ImportError:
        return
    import os
    import tempfile

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = os.environ.get("TAPESHIM_PLOT_DIR") or os.path.join(tempfile.gettempdir(), "tapeshim_plots")
    os.makedirs(folder, exist_ok=True)
    figure, axes = plt.subplots(figsize=(5, 3))
    axes.plot(losses)
    axes.set(xlabel=xlabel, ylabel="loss", title=name)
    figure.tight_layout()
    figure.savefig(os.path.join(folder, f"{name}.png"))
    plt.close(figure)
