package io.github.yarnadvisor.plugin;

/** A decision table that cannot be read; the message names the JSON path of the problem. */
public final class TableException extends Exception {
  private static final long serialVersionUID = 1L;

  public TableException(String message) {
    super(message);
  }
}
